//! A serde serializer that writes JSON through a serde_json [`Formatter`], as
//! `serde_json::Serializer` does, with its string contents checked by [`super::scan`].

use std::fmt::Display;
use std::io;

use serde::Serialize;
use serde::ser::{self, Error as _, Impossible};
use serde_json::Error;
use serde_json::ser::{CharEscape, Formatter};

use super::copy::push_quoted;
use super::scan::first_escape;

type Result<T> = std::result::Result<T, Error>;

/// The name serde_json gives the struct a `serde_json::value::RawValue` serializes as.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// Writes JSON into a buffer through the formatter `F`: the same text `serde_json::Serializer`
/// with `F` writes for every value, provided `F` keeps serde_json's default string methods
/// (as its compact and pretty formatters and the data plane's spaced one do): strings are
/// written here, between plain quotes, not through them.
pub(crate) struct Serializer<F> {
    writer: Vec<u8>,
    formatter: F,
}

impl<F: Formatter> Serializer<F> {
    /// A serializer writing into `writer`, after what it holds, through `formatter`.
    pub(crate) fn with_formatter(writer: Vec<u8>, formatter: F) -> Self {
        Self { writer, formatter }
    }

    /// The text written.
    pub(crate) fn into_inner(self) -> Vec<u8> {
        self.writer
    }

    #[inline]
    fn string(&mut self, value: &str) -> Result<()> {
        let bytes = value.as_bytes();
        let clean = first_escape(bytes);
        if clean == bytes.len() {
            push_quoted(&mut self.writer, bytes);
            return Ok(());
        }
        self.writer.push(b'"');
        self.writer.extend_from_slice(&bytes[..clean]);
        escaped(&mut self.writer, &mut self.formatter, &bytes[clean..]).map_err(Error::io)?;
        self.writer.push(b'"');
        Ok(())
    }

    /// `{` and the key of an enum variant's one entry, up to its value.
    fn begin_variant(&mut self, variant: &str) -> Result<()> {
        self.formatter
            .begin_object(&mut self.writer)
            .map_err(Error::io)?;
        self.formatter
            .begin_object_key(&mut self.writer, true)
            .map_err(Error::io)?;
        self.string(variant)?;
        self.formatter
            .end_object_key(&mut self.writer)
            .map_err(Error::io)?;
        self.formatter
            .begin_object_value(&mut self.writer)
            .map_err(Error::io)
    }

    /// Opens an array or object with `begin`, and closes it at once with `end` when `len` says
    /// it is empty (as serde_json does).
    fn open(
        &mut self,
        len: Option<usize>,
        begin: fn(&mut F, &mut Vec<u8>) -> io::Result<()>,
        end: fn(&mut F, &mut Vec<u8>) -> io::Result<()>,
    ) -> Result<Compound<'_, F>> {
        begin(&mut self.formatter, &mut self.writer).map_err(Error::io)?;
        let state = if len == Some(0) {
            end(&mut self.formatter, &mut self.writer).map_err(Error::io)?;
            State::Empty
        } else {
            State::First
        };
        Ok(Compound::Items { ser: self, state })
    }

    fn end_variant(&mut self) -> Result<()> {
        self.formatter
            .end_object_value(&mut self.writer)
            .map_err(Error::io)?;
        self.formatter
            .end_object(&mut self.writer)
            .map_err(Error::io)
    }
}

/// Writes `bytes` (a string's, from a byte JSON escapes on), escaped as serde_json escapes
/// them.
fn escaped<F: Formatter>(w: &mut Vec<u8>, f: &mut F, bytes: &[u8]) -> io::Result<()> {
    let mut start = 0;
    while start < bytes.len() {
        let at = start + first_escape(&bytes[start..]);
        w.extend_from_slice(&bytes[start..at]);
        if let Some(&byte) = bytes.get(at) {
            f.write_char_escape(w, char_escape(byte))?;
        }
        start = at + 1;
    }
    Ok(())
}

/// How serde_json escapes `byte`, one [`first_escape`] found.
fn char_escape(byte: u8) -> CharEscape {
    match byte {
        b'"' => CharEscape::Quote,
        b'\\' => CharEscape::ReverseSolidus,
        0x08 => CharEscape::Backspace,
        b'\t' => CharEscape::Tab,
        b'\n' => CharEscape::LineFeed,
        0x0c => CharEscape::FormFeed,
        b'\r' => CharEscape::CarriageReturn,
        other => CharEscape::AsciiControl(other),
    }
}

macro_rules! write_number {
    ($($method:ident($type:ty) => $write:ident,)*) => {
        $(fn $method(self, value: $type) -> Result<()> {
            self.formatter.$write(&mut self.writer, value).map_err(Error::io)
        })*
    };
}

impl<'a, F: Formatter> ser::Serializer for &'a mut Serializer<F> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, F>;
    type SerializeTuple = Compound<'a, F>;
    type SerializeTupleStruct = Compound<'a, F>;
    type SerializeTupleVariant = Compound<'a, F>;
    type SerializeMap = Compound<'a, F>;
    type SerializeStruct = Compound<'a, F>;
    type SerializeStructVariant = Compound<'a, F>;

    write_number! {
        serialize_bool(bool) => write_bool,
        serialize_i8(i8) => write_i8,
        serialize_i16(i16) => write_i16,
        serialize_i32(i32) => write_i32,
        serialize_i64(i64) => write_i64,
        serialize_i128(i128) => write_i128,
        serialize_u8(u8) => write_u8,
        serialize_u16(u16) => write_u16,
        serialize_u32(u32) => write_u32,
        serialize_u64(u64) => write_u64,
        serialize_u128(u128) => write_u128,
    }

    fn serialize_f32(self, value: f32) -> Result<()> {
        if value.is_finite() {
            self.formatter
                .write_f32(&mut self.writer, value)
                .map_err(Error::io)
        } else {
            self.serialize_unit()
        }
    }

    fn serialize_f64(self, value: f64) -> Result<()> {
        if value.is_finite() {
            self.formatter
                .write_f64(&mut self.writer, value)
                .map_err(Error::io)
        } else {
            self.serialize_unit()
        }
    }

    fn serialize_char(self, value: char) -> Result<()> {
        self.string(value.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, value: &str) -> Result<()> {
        self.string(value)
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<()> {
        self.formatter
            .write_byte_array(&mut self.writer, value)
            .map_err(Error::io)
    }

    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.formatter
            .write_null(&mut self.writer)
            .map_err(Error::io)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.string(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.begin_variant(variant)?;
        value.serialize(&mut *self)?;
        self.end_variant()
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, F>> {
        self.open(len, F::begin_array, F::end_array)
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, F>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a, F>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, F>> {
        self.begin_variant(variant)?;
        self.serialize_seq(Some(len))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, F>> {
        self.open(len, F::begin_object, F::end_object)
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'a, F>> {
        if name == RAW_VALUE {
            return Ok(Compound::Raw { ser: self });
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, F>> {
        self.begin_variant(variant)?;
        self.serialize_map(Some(len))
    }

    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<()> {
        self.string(&value.to_string())
    }
}

/// Whether a container has had an item yet, or was empty and is already closed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Empty,
    First,
    Rest,
}

/// An array, object or enum variant being written; or a `RawValue`'s text.
pub(crate) enum Compound<'a, F> {
    /// Items of an array or entries of an object.
    Items {
        ser: &'a mut Serializer<F>,
        state: State,
    },
    /// A `serde_json::value::RawValue`, written as its text.
    Raw { ser: &'a mut Serializer<F> },
}

impl<F: Formatter> Compound<'_, F> {
    fn items(&mut self) -> (&mut Serializer<F>, &mut State) {
        match self {
            Compound::Items { ser, state } => (ser, state),
            Compound::Raw { .. } => unreachable!("a RawValue has fields only"),
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let (ser, state) = self.items();
        ser.formatter
            .begin_array_value(&mut ser.writer, *state == State::First)
            .map_err(Error::io)?;
        *state = State::Rest;
        value.serialize(&mut *ser)?;
        ser.formatter
            .end_array_value(&mut ser.writer)
            .map_err(Error::io)
    }

    fn end_array(&mut self) -> Result<()> {
        let (ser, state) = self.items();
        if *state == State::Empty {
            return Ok(());
        }
        ser.formatter.end_array(&mut ser.writer).map_err(Error::io)
    }

    fn end_object(&mut self) -> Result<()> {
        match self {
            Compound::Raw { .. } => Ok(()),
            Compound::Items { ser, state } => {
                if *state == State::Empty {
                    return Ok(());
                }
                ser.formatter.end_object(&mut ser.writer).map_err(Error::io)
            }
        }
    }
}

/// The traits of a sequence-like container whose items are written as an array's elements.
macro_rules! array_items {
    ($($trait:ident :: $method:ident,)*) => {
        $(impl<F: Formatter> ser::$trait for Compound<'_, F> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                self.element(value)
            }

            fn end(mut self) -> Result<()> {
                self.end_array()
            }
        })*
    };
}

array_items! {
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
}

impl<F: Formatter> ser::SerializeTupleVariant for Compound<'_, F> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }

    fn end(mut self) -> Result<()> {
        self.end_array()?;
        self.items().0.end_variant()
    }
}

impl<F: Formatter> ser::SerializeMap for Compound<'_, F> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        let (ser, state) = self.items();
        ser.formatter
            .begin_object_key(&mut ser.writer, *state == State::First)
            .map_err(Error::io)?;
        *state = State::Rest;
        key.serialize(KeySerializer(&mut *ser))?;
        ser.formatter
            .end_object_key(&mut ser.writer)
            .map_err(Error::io)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let (ser, _) = self.items();
        ser.formatter
            .begin_object_value(&mut ser.writer)
            .map_err(Error::io)?;
        value.serialize(&mut *ser)?;
        ser.formatter
            .end_object_value(&mut ser.writer)
            .map_err(Error::io)
    }

    fn end(mut self) -> Result<()> {
        self.end_object()
    }
}

impl<F: Formatter> ser::SerializeStruct for Compound<'_, F> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        match self {
            Compound::Items { .. } => ser::SerializeMap::serialize_entry(self, key, value),
            Compound::Raw { ser } if key == RAW_VALUE => {
                // The field is the raw text as a string: serde_json's own serializer reads
                // it back, rare enough not to matter.
                let quoted = serde_json::to_string(value)?;
                let text: String = serde_json::from_str(&quoted)?;
                ser.formatter
                    .write_raw_fragment(&mut ser.writer, &text)
                    .map_err(Error::io)
            }
            Compound::Raw { .. } => Err(Error::custom("invalid raw value")),
        }
    }

    fn end(mut self) -> Result<()> {
        self.end_object()
    }
}

impl<F: Formatter> ser::SerializeStructVariant for Compound<'_, F> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeMap::serialize_entry(self, key, value)
    }

    fn end(mut self) -> Result<()> {
        self.end_object()?;
        self.items().0.end_variant()
    }
}

/// Writes a map's key as serde_json does: strings as they are; numbers, `bool`s and `char`s
/// quoted; anything else refused.
struct KeySerializer<'a, F>(&'a mut Serializer<F>);

fn key_must_be_a_string() -> Error {
    Error::custom("key must be a string")
}

impl<F: Formatter> KeySerializer<'_, F> {
    /// What `write` writes, between quotes.
    fn quoted(self, write: impl FnOnce(&mut F, &mut Vec<u8>) -> io::Result<()>) -> Result<()> {
        let ser = self.0;
        ser.formatter
            .begin_string(&mut ser.writer)
            .map_err(Error::io)?;
        write(&mut ser.formatter, &mut ser.writer).map_err(Error::io)?;
        ser.formatter.end_string(&mut ser.writer).map_err(Error::io)
    }
}

macro_rules! quoted_key {
    ($($method:ident($type:ty) => $write:ident,)*) => {
        $(fn $method(self, value: $type) -> Result<()> {
            self.quoted(|f, w| f.$write(w, value))
        })*
    };
}

macro_rules! refused_key {
    ($($method:ident($($arg:ty),*),)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<()> {
            Err(key_must_be_a_string())
        })*
    };
}

impl<F: Formatter> ser::Serializer for KeySerializer<'_, F> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    quoted_key! {
        serialize_bool(bool) => write_bool,
        serialize_i8(i8) => write_i8,
        serialize_i16(i16) => write_i16,
        serialize_i32(i32) => write_i32,
        serialize_i64(i64) => write_i64,
        serialize_i128(i128) => write_i128,
        serialize_u8(u8) => write_u8,
        serialize_u16(u16) => write_u16,
        serialize_u32(u32) => write_u32,
        serialize_u64(u64) => write_u64,
        serialize_u128(u128) => write_u128,
    }

    refused_key! {
        serialize_bytes(&[u8]),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_none(),
    }

    fn serialize_f32(self, value: f32) -> Result<()> {
        if !value.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(|f, w| f.write_f32(w, value))
    }

    fn serialize_f64(self, value: f64) -> Result<()> {
        if !value.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(|f, w| f.write_f64(w, value))
    }

    fn serialize_char(self, value: char) -> Result<()> {
        self.0.string(value.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, value: &str) -> Result<()> {
        self.0.string(value)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.0.string(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Impossible<(), Error>> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Impossible<(), Error>> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Impossible<(), Error>> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Impossible<(), Error>> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Impossible<(), Error>> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Impossible<(), Error>> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Impossible<(), Error>> {
        Err(key_must_be_a_string())
    }

    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<()> {
        self.0.string(&value.to_string())
    }
}

fn float_key_must_be_finite() -> Error {
    Error::custom("float key must be finite (got NaN or +/-inf)")
}
