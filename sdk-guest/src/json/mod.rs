//! JSON printing for guests: serde_json's formatters (its compact and pretty ones, and the
//! data plane's spaced one) driven, in guests built with WebAssembly SIMD128, by a serializer
//! of this crate whose string escaping looks for the bytes to escape 16 at a time
//! (`scan.rs`). serde_json's own serializer checks one byte at a time and does not let a
//! formatter replace that check; in a guest it is most of what printing a large data part
//! costs. The text is byte for byte serde_json's; without SIMD128 serde_json prints it.
//! [`dumps`] prints as Python's `json.dumps` does instead, with serde_json's serializer.

pub(crate) mod dumps;

#[cfg(any(test, all(target_arch = "wasm32", target_feature = "simd128")))]
mod copy;
#[cfg(any(test, all(target_arch = "wasm32", target_feature = "simd128")))]
mod scan;
#[cfg(any(test, all(target_arch = "wasm32", target_feature = "simd128")))]
mod ser;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

/// `value` as JSON text written with `formatter`, into a buffer of `capacity` bytes to begin
/// with.
///
/// # Errors
/// serde_json's, for what serde_json refuses: a map key that is not a string, a number or a
/// `bool`, a float key that is not finite, or an error the value's `Serialize` raises.
pub fn to_string_with<T: Serialize + ?Sized, F: Formatter>(
    value: &T,
    formatter: F,
    capacity: usize,
) -> serde_json::Result<String> {
    #[cfg(any(test, all(target_arch = "wasm32", target_feature = "simd128")))]
    let text = {
        let mut serializer =
            ser::Serializer::with_formatter(Vec::with_capacity(capacity), formatter);
        value.serialize(&mut serializer)?;
        serializer.into_inner()
    };
    // Without SIMD128 a chunk is checked a byte at a time, no faster than serde_json.
    #[cfg(not(any(test, all(target_arch = "wasm32", target_feature = "simd128"))))]
    let text = {
        let mut text = Vec::with_capacity(capacity);
        value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut text, formatter,
        ))?;
        text
    };
    // SAFETY: the serializer writes only UTF-8: the strings it is given, ASCII escapes, and
    // what serde_json's formatters write (ASCII).
    Ok(unsafe { String::from_utf8_unchecked(text) })
}

/// `value` as compact JSON, as `serde_json::to_string` writes it.
///
/// # Errors
/// As [`to_string_with`].
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    to_string_with(value, CompactFormatter, 128)
}

/// `value` as 2-space-indented JSON, as `serde_json::to_string_pretty` writes it.
///
/// # Errors
/// As [`to_string_with`].
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    to_string_with(value, PrettyFormatter::new(), 128)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::value::RawValue;
    use serde_json::{Value, json};

    use super::*;
    use crate::part::Spaced;

    /// serde_json's text of `value` with `formatter`, or its error's message.
    fn serde_json_text<T: Serialize + ?Sized, F: Formatter>(value: &T, formatter: F) -> String {
        let mut text = Vec::new();
        match value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut text, formatter,
        )) {
            Ok(()) => String::from_utf8(text).unwrap(),
            Err(e) => format!("error: {e}"),
        }
    }

    fn ours<T: Serialize + ?Sized, F: Formatter>(value: &T, formatter: F) -> String {
        to_string_with(value, formatter, 0).unwrap_or_else(|e| format!("error: {e}"))
    }

    fn same<T: Serialize + ?Sized>(value: &T) {
        assert_eq!(
            ours(value, CompactFormatter),
            serde_json_text(value, CompactFormatter)
        );
        assert_eq!(
            ours(value, PrettyFormatter::new()),
            serde_json_text(value, PrettyFormatter::new())
        );
        assert_eq!(ours(value, Spaced), serde_json_text(value, Spaced));
    }

    /// Strings of every length up to 40 with each byte JSON escapes (and some it does not) at
    /// every place, and runs of them.
    fn strings() -> Vec<String> {
        let mut strings = vec![String::new(), "é ü 😀 \u{7f}".into(), "\"\\\"\\".into()];
        for n in 0..40 {
            let clean: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            strings.push(clean.clone());
            for at in 0..n {
                for special in [
                    '"', '\\', '\0', '\u{8}', '\t', '\n', '\u{c}', '\r', '\u{1f}', '/', 'é',
                ] {
                    let mut s: Vec<char> = clean.chars().collect();
                    s[at] = special;
                    strings.push(s.into_iter().collect());
                }
            }
        }
        strings
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for s in strings() {
            same(&s);
            same(&json!({ s.clone(): [s.clone(), {"k": s}] }));
        }
    }

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(i32),
        Tuple(u8, String),
        Struct { a: Option<f64>, b: Vec<Shape> },
        Empty {},
        EmptyTuple(),
    }

    #[derive(Serialize)]
    struct Everything {
        unit: (),
        none: Option<u8>,
        some: Option<&'static str>,
        numbers: (i8, i16, i32, i64, i128, u8, u16, u32, u64, u128),
        floats: [f64; 7],
        float32: [f32; 3],
        chars: [char; 3],
        shapes: Vec<Shape>,
        int_keys: BTreeMap<i64, bool>,
        bool_keys: BTreeMap<bool, ()>,
        char_keys: BTreeMap<char, u8>,
        empty_map: BTreeMap<String, u8>,
        empty_list: Vec<u8>,
        nested: Vec<Vec<Value>>,
        raw: Box<RawValue>,
        #[serde(flatten)]
        extra: BTreeMap<String, Value>,
    }

    struct Bytes(&'static [u8]);

    impl Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    #[test]
    fn every_shape_serde_has_prints_as_serde_json_prints_it() {
        let everything = Everything {
            unit: (),
            none: None,
            some: Some("x"),
            numbers: (
                i8::MIN,
                -1,
                0,
                i64::MAX,
                i128::MIN,
                255,
                1,
                2,
                u64::MAX,
                u128::MAX,
            ),
            floats: [0.0, -0.0, 1.5, 1e300, f64::NAN, f64::INFINITY, 1.0 / 3.0],
            float32: [0.1, f32::NEG_INFINITY, 3.0],
            chars: ['a', '"', '\n'],
            shapes: vec![
                Shape::Unit,
                Shape::Newtype(-3),
                Shape::Tuple(1, "t\"".into()),
                Shape::Struct {
                    a: Some(2.5),
                    b: vec![Shape::Unit, Shape::Empty {}],
                },
                Shape::Struct { a: None, b: vec![] },
                Shape::EmptyTuple(),
            ],
            int_keys: BTreeMap::from([(-1, true), (7, false)]),
            bool_keys: BTreeMap::from([(true, ())]),
            char_keys: BTreeMap::from([('\t', 1)]),
            empty_map: BTreeMap::new(),
            empty_list: Vec::new(),
            nested: vec![vec![json!(null), json!([]), json!({})], vec![]],
            raw: RawValue::from_string(r#"{"a" : [1,2]}"#.into()).unwrap(),
            extra: BTreeMap::from([("flat".into(), json!({"x": [1, "y"]}))]),
        };
        same(&everything);
        same(&Bytes(b"\x00\xffab"));
        same(&Bytes(b""));
        same(&(1, "two", [3.0]));
    }

    #[test]
    fn keys_serde_json_refuses_are_refused_with_its_message() {
        same(&BTreeMap::from([((1, 2), 3)]));
        same(&BTreeMap::from([(Some("k"), 1)]));
        same(&BTreeMap::from([(Option::<&str>::None, 1)]));
        same(&BTreeMap::from([(vec![1], 1)]));
        same(&BTreeMap::from([((), 1)]));
        same(&Keyed(vec![(Shape::Newtype(1), 1)]));
        same(&Keyed(vec![(Shape::Unit, 1)]));
        let float_keys: Vec<(f64, u8)> = vec![(1.5, 1), (f64::NAN, 2)];
        same(&Keyed(float_keys));
    }

    /// A map of any keys, in order.
    struct Keyed<K, V>(Vec<(K, V)>);

    impl<K: Serialize, V: Serialize> Serialize for Keyed<K, V> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
        }
    }
}
