//! The JSON encoding of the reference SDK's own routes (protocol.md#json-encoding): Python's
//! `json.dumps` defaults, i.e. `", "` and `": "` separators and every non-ASCII character written
//! as a `\uXXXX` escape. Clients parse JSON either way; this keeps envhost byte-compatible.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

use crate::python_form::is_python_form;

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

    /// A raw value (a [`crate::json_object::JsonObject`]'s text), rewritten as Python writes
    /// the same value: see [`write_python_raw`].
    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_python_raw(w, fragment)
    }
}

/// Writes `raw`, one valid JSON text, as [`to_python_json`] writes the value it holds, in one
/// pass over the text and without a tree: whitespace outside strings dropped, `", "` and
/// `": "` separators, and in strings every character escaped exactly as serde_json's escaper
/// and [`PythonFormatter`] escape it (short escapes for `\b \f \n \r \t " \\`, other
/// control characters and everything beyond ASCII as lowercase `\uXXXX`, the rest as itself,
/// whichever way the text wrote it). Numbers are written as the text wrote them.
///
/// Text already in that form (what the SDKs print for `data/get`) is recognised 64 bytes at a
/// time ([`is_python_form`]) and copied whole; other text is copied in runs as long as the
/// text allows: only bytes that change interrupt a run.
///
/// # Errors
/// The writer's.
pub fn write_python_raw<W: ?Sized + io::Write>(w: &mut W, raw: &str) -> io::Result<()> {
    let bytes = raw.as_bytes();
    if is_python_form(raw) {
        return w.write_all(bytes);
    }
    let mut i = 0;
    // The start of the run of bytes not yet written that are written as they are.
    let mut run = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = plain_string_bytes(bytes, i + 1);
                match bytes.get(i) {
                    Some(b'"') => i += 1,
                    Some(_) => {
                        w.write_all(&bytes[run..i])?;
                        i = write_python_string_body(w, raw, i)?;
                        run = i;
                    }
                    None => {}
                }
            }
            b',' | b':' => {
                i += 1;
                if bytes.get(i) == Some(&b' ') && !is_space(bytes.get(i + 1)) {
                    i += 1;
                } else {
                    w.write_all(&bytes[run..i])?;
                    w.write_all(b" ")?;
                    run = i;
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                w.write_all(&bytes[run..i])?;
                i += 1;
                run = i;
            }
            _ => i += 1,
        }
    }
    w.write_all(&bytes[run..])
}

/// Whether `byte` is JSON whitespace.
fn is_space(byte: Option<&u8>) -> bool {
    matches!(byte, Some(b' ' | b'\t' | b'\n' | b'\r'))
}

/// The index of the first byte at or after `from` that a string body cannot copy as it is: a
/// quote, a backslash or a byte beyond ASCII (`bytes.len()` when there is none). Reads eight
/// bytes at a time.
fn plain_string_bytes(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    // A byte of `x` is zero exactly where the high bit of the answer is set (no false
    // positives below the first zero byte, which is all the scan needs).
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_ne_bytes(word);
        if (has_zero(word ^ QUOTES) | has_zero(word ^ BACKSLASHES) | (word & HIGHS)) != 0 {
            break;
        }
        i += 8;
    }
    while let Some(&byte) = bytes.get(i) {
        if byte == b'"' || byte == b'\\' || byte >= 0x80 {
            break;
        }
        i += 1;
    }
    i
}

/// Writes the body of the string that starts at `raw[start..]` (after its opening quote) and
/// its closing quote; answers the index after that quote.
fn write_python_string_body<W: ?Sized + io::Write>(
    w: &mut W,
    raw: &str,
    start: usize,
) -> io::Result<usize> {
    let bytes = raw.as_bytes();
    let mut i = start;
    let mut run = start;
    loop {
        i = plain_string_bytes(bytes, i);
        let Some(&byte) = bytes.get(i) else {
            w.write_all(&bytes[run..])?;
            return Ok(bytes.len());
        };
        match byte {
            b'"' => {
                w.write_all(&bytes[run..=i])?;
                return Ok(i + 1);
            }
            b'\\' => {
                w.write_all(&bytes[run..i])?;
                i = write_python_escape(w, bytes, i)?;
                run = i;
            }
            _ => {
                w.write_all(&bytes[run..i])?;
                let c = raw[i..].chars().next().unwrap_or('\u{fffd}');
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(w, "\\u{unit:04x}")?;
                }
                i += c.len_utf8();
                run = i;
            }
        }
    }
}

/// Writes the escape at `bytes[at..]` (a backslash and what follows) as serde_json's escaper
/// writes the character it stands for; answers the index after it.
fn write_python_escape<W: ?Sized + io::Write>(
    w: &mut W,
    bytes: &[u8],
    at: usize,
) -> io::Result<usize> {
    match bytes.get(at + 1) {
        Some(b'u') => {
            let unit = bytes
                .get(at + 2..at + 6)
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u16::from_str_radix(hex, 16).ok());
            let Some(unit) = unit else {
                w.write_all(&bytes[at..])?;
                return Ok(bytes.len());
            };
            match unit {
                0x08 => w.write_all(b"\\b")?,
                0x09 => w.write_all(b"\\t")?,
                0x0a => w.write_all(b"\\n")?,
                0x0c => w.write_all(b"\\f")?,
                0x0d => w.write_all(b"\\r")?,
                0x22 => w.write_all(b"\\\"")?,
                0x5c => w.write_all(b"\\\\")?,
                0x20..=0x7f => w.write_all(&[unit as u8])?,
                _ => write!(w, "\\u{unit:04x}")?,
            }
            Ok(at + 6)
        }
        Some(b'/') => {
            w.write_all(b"/")?;
            Ok(at + 2)
        }
        Some(_) => {
            w.write_all(&bytes[at..at + 2])?;
            Ok(at + 2)
        }
        None => {
            w.write_all(&bytes[at..])?;
            Ok(bytes.len())
        }
    }
}

/// `value` encoded as Python's `json.dumps(value)` encodes it.
pub fn to_python_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    to_python_json_sized(value, 128)
}

/// [`to_python_json`] into a buffer of `size_hint` bytes to start with: about what the value
/// encodes to, so that a large answer is written without growing its buffer on the way.
pub fn to_python_json_sized<T: Serialize + ?Sized>(value: &T, size_hint: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size_hint);
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
    fn raw_text_is_written_as_python_writes_its_value() {
        let texts = [
            r#"{"a":[1,2.50,{"b":null}],"s":"\u00fcn\u00ef \ud83c\udf89\n","t":true}"#,
            "{ \"k\" : \"ünï 🎉 \\\" \\\\ \\/ \\u0041\\u001f\\b\\t\" ,\n \"e\": [ ], \"o\":{} }",
            r#"{"x":"\u007f\u0000, : \"quoted\"","n":-1.5e3}"#,
        ];
        for text in texts {
            let raw = serde_json::value::RawValue::from_string(text.into()).unwrap();
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let mut written = Vec::new();
            write_python_raw(&mut written, raw.get()).unwrap();
            let expected = String::from_utf8(to_python_json(&value)).unwrap();
            let written = String::from_utf8(written).unwrap();
            if text.contains("2.50") {
                assert_eq!(written.replace("2.50", "2.5"), expected);
            } else if text.contains("1.5e3") {
                assert_eq!(written.replace("-1.5e3", "-1500.0"), expected);
            } else {
                assert_eq!(written, expected);
            }
            assert_eq!(String::from_utf8(to_python_json(&raw)).unwrap(), written);
        }
    }

    /// `raw` through [`write_python_raw`], as a string.
    fn transcoded(raw: &str) -> String {
        let mut written = Vec::new();
        write_python_raw(&mut written, raw).unwrap();
        String::from_utf8(written).unwrap()
    }

    #[test]
    fn text_in_python_form_is_written_as_it_is() {
        let value = json!({"a": [1, {"b": "x, y: z"}], "s": "\u{fc} \\ \" end", "e": {}});
        let python = String::from_utf8(to_python_json(&value)).unwrap();
        assert_eq!(transcoded(&python), python);
        assert_eq!(transcoded(&value.to_string()), python);
        assert_eq!(
            transcoded(r#"{"a":  1, "b" :[2 ,3]}"#),
            r#"{"a": 1, "b": [2, 3]}"#
        );
    }

    #[test]
    fn every_special_character_is_found_at_every_offset() {
        for special in ["\"", "\\", "\n", "ü", "🎉", "\u{1}", "\u{7f}", "/"] {
            for offset in 0..20 {
                let text = format!("{}{special}{}", "a".repeat(offset), "b".repeat(offset % 9));
                let value = json!({"k": text, "l": [text]});
                let expected = String::from_utf8(to_python_json(&value)).unwrap();
                assert_eq!(
                    transcoded(&value.to_string()),
                    expected,
                    "{special} at {offset}"
                );
                assert_eq!(transcoded(&expected), expected, "{special} at {offset}");
            }
        }
    }

    #[test]
    fn empty_containers_have_no_spaces() {
        assert_eq!(
            to_python_json(&json!({"a": {}, "b": []})),
            br#"{"a": {}, "b": []}"#
        );
    }
}
