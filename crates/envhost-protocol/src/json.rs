//! The JSON encoding of the reference SDK's own routes (protocol.md#json-encoding): Python's
//! `json.dumps` defaults, i.e. `", "` and `": "` separators and every non-ASCII character written
//! as a `\uXXXX` escape. Clients parse JSON either way; this keeps envhost byte-compatible.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

/// A [`Formatter`] that writes what Python's `json.dumps(value)` writes.
struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if c.is_ascii() {
                continue;
            }
            w.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(w, "\\u{unit:04x}")?;
            }
            start = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
}

/// `value` encoded as Python's `json.dumps(value)` encodes it.
pub fn to_python_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    let mut serializer = Serializer::with_formatter(&mut out, PythonFormatter);
    // Serializing a `Serialize` value into a Vec cannot fail for the JSON values the protocol
    // modules build (string keys only).
    if value.serialize(&mut serializer).is_err() {
        out.clear();
        out.extend_from_slice(b"null");
    }
    out
}

/// `value` as compact JSON text, as its `Display` writes it, but written straight into the
/// string rather than through `fmt::Write` one token at a time (about four times fewer
/// instructions for a tool call's arguments).
pub fn to_text(value: &serde_json::Value) -> String {
    // A `Value` always serializes: its object keys are strings.
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_python_separators_and_ascii_escapes() {
        let v = json!({"jsonrpc": "2.0", "id": 1, "result": {"a": [1, 2], "s": "ünï 🎉\n"}});
        assert_eq!(
            String::from_utf8(to_python_json(&v)).unwrap(),
            r#"{"jsonrpc": "2.0", "id": 1, "result": {"a": [1, 2], "s": "\u00fcn\u00ef \ud83c\udf89\n"}}"#
        );
    }

    #[test]
    fn text_is_what_display_writes() {
        let v = json!({"b": [1, 2.5, null], "a": "ünï \"q\"\n", "c": {"d": true}});
        assert_eq!(to_text(&v), v.to_string());
    }

    #[test]
    fn empty_containers_have_no_spaces() {
        assert_eq!(
            to_python_json(&json!({"a": {}, "b": []})),
            br#"{"a": {}, "b": []}"#
        );
    }
}
