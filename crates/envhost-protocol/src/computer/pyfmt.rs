//! Numbers as the reference's messages and summaries write them: Python's `format(x, "g")` and
//! `repr(x)`.

/// The shortest round-trip digits of finite `x` and its decimal exponent: `x = 0.d1d2… × 10^(exp+1)`,
/// i.e. the first digit's power of ten is `exp`.
fn shortest(x: f64) -> (String, i32) {
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exp) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    (mantissa.replace('.', ""), exp.parse().unwrap_or(0))
}

/// `digits` (no point) with the point placed for a first digit of power `exp`, in fixed
/// notation.
fn fixed(digits: &str, exp: i32) -> String {
    if exp < 0 {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    } else if (exp as usize) + 1 >= digits.len() {
        format!("{digits}{}", "0".repeat(exp as usize + 1 - digits.len()))
    } else {
        let (int, frac) = digits.split_at(exp as usize + 1);
        format!("{int}.{frac}")
    }
}

/// `d.ddde±XX`, Python's exponent form (at least two exponent digits).
fn exponent_form(digits: &str, exp: i32) -> String {
    let (first, rest) = digits.split_at(1);
    let mantissa = if rest.is_empty() {
        first.to_owned()
    } else {
        format!("{first}.{rest}")
    };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

/// How Python writes `x` when it is not finite, or zero (`zero` being its zero's spelling).
fn special(x: f64, zero: &str) -> Option<String> {
    if x.is_nan() {
        Some("nan".into())
    } else if x.is_infinite() {
        Some(if x > 0.0 { "inf" } else { "-inf" }.into())
    } else if x == 0.0 {
        Some(if x.is_sign_negative() {
            format!("-{zero}")
        } else {
            zero.into()
        })
    } else {
        None
    }
}

/// Python's `format(x, "g")`: six significant digits, trailing zeros dropped, the exponent form
/// below 1e-4 and from 1e6.
pub fn g(x: f64) -> String {
    if let Some(text) = special(x, "0") {
        return text;
    }
    let rounded = format!("{:.5e}", x.abs());
    let (mantissa, exp) = rounded.split_once('e').unwrap_or((&rounded, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits = mantissa.replace('.', "");
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let body = if (-4..6).contains(&exp) {
        fixed(digits, exp)
    } else {
        exponent_form(digits, exp)
    };
    if x < 0.0 { format!("-{body}") } else { body }
}

/// Python's `repr(x)` of a float: the shortest round-trip digits, fixed from 1e-4 to below
/// 1e16 (with `.0` when whole), the exponent form outside.
pub fn repr_float(x: f64) -> String {
    if let Some(text) = special(x, "0.0") {
        return text;
    }
    let (digits, exp) = shortest(x);
    let body = if (-4..16).contains(&exp) {
        let text = fixed(&digits, exp);
        if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        }
    } else {
        exponent_form(&digits, exp)
    };
    if x < 0.0 { format!("-{body}") } else { body }
}

/// Python's `repr` of a JSON number as Python reads it: an integer as itself, otherwise a
/// float.
pub fn repr_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        n.to_string()
    } else {
        repr_float(n.as_f64().unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_matches_python() {
        let cases = [
            (100.0, "100"),
            (10.5, "10.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (-3.25, "-3.25"),
            (1280.0, "1280"),
            (2.0 / 3.0, "0.666667"),
            (999999.5, "1e+06"),
        ];
        for (x, python) in cases {
            assert_eq!(g(x), python, "{x}");
        }
    }

    #[test]
    fn repr_matches_python() {
        let cases = [
            (10.0, "10.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (123.456, "123.456"),
        ];
        for (x, python) in cases {
            assert_eq!(repr_float(x), python, "{x}");
        }
        let n: serde_json::Number = serde_json::from_str("10").unwrap();
        assert_eq!(repr_number(&n), "10");
    }
}
