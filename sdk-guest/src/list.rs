//! A return value's elements, when it is a list, each serialized on its own straight from the
//! value (no tree of [`serde_json::Value`]s in between): what a list's content blocks need.

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible, SerializeSeq, SerializeTuple};

/// Each element of a list, as its compact JSON and its content block.
pub struct Element {
    /// The element's compact JSON.
    pub json: String,
    /// Its block: a string's own text, an object's or list's 2-space-indented JSON, the JSON
    /// of anything else.
    pub block: String,
}

/// Why a value's elements could not be taken: it is not a list, or an element does not
/// serialize.
#[derive(Debug)]
pub struct NotAList(String);

impl fmt::Display for NotAList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAList {}

impl ser::Error for NotAList {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self(message.to_string())
    }
}

/// The elements of `value` when it serializes as a sequence (a `Vec`, a slice, an array, a
/// tuple); `Err` for anything else.
///
/// # Errors
/// [`NotAList`].
pub fn elements<T: Serialize + ?Sized>(value: &T) -> Result<Vec<Element>, NotAList> {
    value.serialize(Splitter)
}

fn element<T: Serialize + ?Sized>(value: &T) -> Result<Element, NotAList> {
    let json = crate::json::to_string(value).map_err(ser::Error::custom)?;
    let block = match json.as_bytes().first() {
        Some(b'"') => serde_json::from_str(&json).map_err(ser::Error::custom)?,
        Some(b'{' | b'[') => crate::json::to_string_pretty(value).map_err(ser::Error::custom)?,
        _ => json.clone(),
    };
    Ok(Element { json, block })
}

/// A serializer that takes a sequence's elements and refuses everything else.
struct Splitter;

/// The elements taken so far.
struct Taken(Vec<Element>);

impl SerializeSeq for Taken {
    type Ok = Vec<Element>;
    type Error = NotAList;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotAList> {
        self.0.push(element(value)?);
        Ok(())
    }

    fn end(self) -> Result<Vec<Element>, NotAList> {
        Ok(self.0)
    }
}

impl SerializeTuple for Taken {
    type Ok = Vec<Element>;
    type Error = NotAList;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotAList> {
        SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<Vec<Element>, NotAList> {
        Ok(self.0)
    }
}

fn not_a_list<T>() -> Result<T, NotAList> {
    Err(NotAList("not a list".into()))
}

impl ser::Serializer for Splitter {
    type Ok = Vec<Element>;
    type Error = NotAList;
    type SerializeSeq = Taken;
    type SerializeTuple = Taken;
    type SerializeTupleStruct = Impossible<Vec<Element>, NotAList>;
    type SerializeTupleVariant = Impossible<Vec<Element>, NotAList>;
    type SerializeMap = Impossible<Vec<Element>, NotAList>;
    type SerializeStruct = Impossible<Vec<Element>, NotAList>;
    type SerializeStructVariant = Impossible<Vec<Element>, NotAList>;

    fn serialize_seq(self, len: Option<usize>) -> Result<Taken, NotAList> {
        Ok(Taken(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<Taken, NotAList> {
        Ok(Taken(Vec::with_capacity(len)))
    }
    fn serialize_bool(self, _: bool) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_i8(self, _: i8) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_i16(self, _: i16) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_i32(self, _: i32) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_i64(self, _: i64) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_u8(self, _: u8) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_u16(self, _: u16) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_u32(self, _: u32) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_u64(self, _: u64) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_f32(self, _: f32) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_f64(self, _: f64) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_char(self, _: char) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_str(self, _: &str) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_none(self) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, NotAList> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Self::Ok, NotAList> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Self::Ok, NotAList> {
        not_a_list()
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotAList> {
        not_a_list()
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotAList> {
        not_a_list()
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotAList> {
        not_a_list()
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, NotAList> {
        not_a_list()
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotAList> {
        not_a_list()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_lists_elements_are_taken_and_anything_else_refused() {
        let taken = elements(&vec![json!({"a": [1]}), json!("x"), json!(2.5)]).unwrap();
        let blocks: Vec<&str> = taken.iter().map(|e| e.block.as_str()).collect();
        assert_eq!(blocks, ["{\n  \"a\": [\n    1\n  ]\n}", "x", "2.5"]);
        assert_eq!(taken[0].json, r#"{"a":[1]}"#);
        assert!(elements(&json!({"a": 1})).is_err());
        assert!(elements("text").is_err());
        assert_eq!(elements(&Some([1, 2])).unwrap().len(), 2);
    }
}
