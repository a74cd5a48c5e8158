//! [`json_dumps`]: JSON text as Python's `json.dumps` writes it, for the bytes a port of a
//! reference-SDK environment must reproduce (an object it uploads, a text it answers).

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;

use crate::part::Spaced;

/// `value` as JSON text the way Python's `json.dumps(value)` writes it with its defaults:
/// `", "` and `": "` between items, keys and values; every character but printable ASCII escaped
/// as `\uXXXX` (lowercase hex, a surrogate pair beyond the Basic Multilingual Plane), as
/// `ensure_ascii` does; and floats as Python's `repr` writes them (`1.0`, `0.0001`, `1e-05`,
/// `1e+16`). Strings, integers and the order of keys are serde_json's.
///
/// ```
/// use serde_json::json;
///
/// let titles = ["café", "plan"];
/// assert_eq!(envhost_sdk::json_dumps(&titles).unwrap(), r#"["caf\u00e9", "plan"]"#);
/// assert_eq!(
///     envhost_sdk::json_dumps(&json!({"ratio": 1.5e-7, "big": 1e16, "n": 3})).unwrap(),
///     r#"{"ratio": 1.5e-07, "big": 1e+16, "n": 3}"#
/// );
/// ```
///
/// A float that is not finite is written `null`, as serde_json writes it (Python writes `NaN`
/// or `Infinity`, which are not JSON).
///
/// # Errors
/// serde_json's, for what serde_json refuses: a map key that is not a string, a number or a
/// `bool`, a float key that is not finite, or an error the value's `Serialize` raises.
pub fn json_dumps<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut text = Vec::with_capacity(128);
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut text,
        PythonDefaults,
    ))?;
    // The formatter writes ASCII only, and the strings it is given are UTF-8.
    Ok(String::from_utf8(text).unwrap_or_default())
}

/// The separators, escapes and float texts of `json.dumps`'s defaults.
struct PythonDefaults;

impl Formatter for PythonDefaults {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        Spaced.begin_array_value(w, first)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        Spaced.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        Spaced.begin_object_value(w)
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut ascii_from = 0;
        for (at, c) in fragment.char_indices() {
            if (' '..='~').contains(&c) {
                continue;
            }
            w.write_all(&fragment.as_bytes()[ascii_from..at])?;
            for unit in c.encode_utf16(&mut [0; 2]) {
                write!(w, "\\u{unit:04x}")?;
            }
            ascii_from = at + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[ascii_from..])
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(python_repr(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }
}

/// A finite float as Python's `repr` writes it: its shortest digits that read back as it, in
/// positional notation when its decimal exponent is from -4 to 15 (with `.0` when it has no
/// fraction), otherwise as `d.ddde±XX` (at least two exponent digits).
fn python_repr(value: f64) -> String {
    // `{:e}` writes the same shortest digits: `-1.25e-7`.
    let shortest = format!("{value:e}");
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(magnitude) => ("-", magnitude),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exponent) {
        // `exponent + 1` digits before the point; the exponent is within -4..16, so this is
        // from -3 to 16.
        let before = exponent + 1;
        let zeros = |n: i32| "0".repeat(usize::try_from(n).unwrap_or(0));
        let before_len = usize::try_from(before).unwrap_or(0);
        if before <= 0 {
            format!("{sign}0.{}{digits}", zeros(-before))
        } else if before_len >= digits.len() {
            let padding = zeros(before - i32::try_from(digits.len()).unwrap_or(0));
            format!("{sign}{digits}{padding}.0")
        } else {
            let (whole, fraction) = digits.split_at(before_len);
            format!("{sign}{whole}.{fraction}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        let magnitude = exponent.unsigned_abs();
        format!("{sign}{first}{point}{rest}e{exponent_sign}{magnitude:02}")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    #[test]
    fn floats_are_written_as_pythons_repr_writes_them() {
        // Each as `repr(float(text))` answers in CPython.
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (123.456, "123.456"),
            (0.0001, "0.0001"),
            (0.00012, "0.00012"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e15, "1000000000000000.0"),
            (123_456_789_012_345.6, "123456789012345.6"),
            (1e16, "1e+16"),
            (1.2345e16, "1.2345e+16"),
            (1e100, "1e+100"),
            (-1e-100, "-1e-100"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
        ];
        for (value, repr) in cases {
            assert_eq!(python_repr(value), repr, "{value:e}");
        }
    }

    #[test]
    fn strings_beyond_ascii_are_escaped_and_the_separators_spaced() {
        let value = json!({"t\u{e9}": ["caf\u{e9}", "\u{1f600}", "\"\\\n\t\u{1}\u{7f}/"], "n": [1, -2, 2.0]});
        // As CPython's `json.dumps` writes the same object.
        assert_eq!(
            json_dumps(&value).unwrap(),
            r#"{"t\u00e9": ["caf\u00e9", "\ud83d\ude00", "\"\\\n\t\u0001\u007f/"], "n": [1, -2, 2.0]}"#
        );
        assert_eq!(json_dumps(&Vec::<u8>::new()).unwrap(), "[]");
        assert_eq!(json_dumps(&json!({})).unwrap(), "{}");
        assert_eq!(json_dumps(&f64::NAN).unwrap(), "null");
        assert_eq!(json_dumps(&FloatKey).unwrap(), r#"{"1.5": true}"#);
    }

    /// `{1.5: True}`: a map with a float key.
    struct FloatKey;

    impl Serialize for FloatKey {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map([(1.5, true)])
        }
    }

    #[test]
    fn keys_serde_json_refuses_are_refused() {
        assert!(json_dumps(&BTreeMap::from([((1, 2), 3)])).is_err());
    }
}
