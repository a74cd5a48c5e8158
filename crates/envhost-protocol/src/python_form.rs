//! Whether a JSON text is already written as Python's `json.dumps` writes its value
//! (protocol.md#json-encoding), checked 64 bytes at a time, so that text in that form (what the
//! Rust, Python and JavaScript SDKs print for `data/get`) is copied as it is.

/// Bytes per block: one bit of a `u64` mask per byte.
const BLOCK: usize = 64;

/// One block's bytes of each kind, bit `i` for byte `i`.
#[derive(Debug, PartialEq, Eq)]
struct Classes {
    quotes: u64,
    separators: u64,
    spaces: u64,
    /// Backslashes, control characters (below `0x20`) and bytes beyond ASCII (`0x80` on): any
    /// of them leaves the text to the byte-at-a-time writer.
    others: u64,
}

impl Classes {
    /// Classifies `block`; bytes past its end count as ordinary ones (neither quote,
    /// separator, space nor other).
    fn of(block: &[u8]) -> Self {
        let mut bytes = [b'0'; BLOCK];
        bytes[..block.len()].copy_from_slice(block);
        // SAFETY: SSE2 is part of every x86-64 processor (the target's baseline).
        #[cfg(target_arch = "x86_64")]
        return unsafe { Self::of_sse2(&bytes) };
        #[cfg(not(target_arch = "x86_64"))]
        return Self::of_bytes(&bytes);
    }

    /// [`Classes::of`] a whole block, a byte at a time.
    #[cfg(any(test, not(target_arch = "x86_64")))]
    fn of_bytes(bytes: &[u8; BLOCK]) -> Self {
        let mask = |is: &dyn Fn(u8) -> bool| {
            (0..BLOCK).fold(0u64, |mask, i| mask | u64::from(is(bytes[i])) << i)
        };
        Self {
            quotes: mask(&|b| b == b'"'),
            separators: mask(&|b| b == b',' || b == b':'),
            spaces: mask(&|b| b == b' '),
            others: mask(&|b| b == b'\\' || !(0x20..0x80).contains(&b)),
        }
    }

    /// [`Classes::of`] a whole block, 16 bytes at a time with SSE2 (which every x86-64 has).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    fn of_sse2(bytes: &[u8; BLOCK]) -> Self {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_movemask_epi8, _mm_or_si128,
            _mm_set_epi64x, _mm_set1_epi8,
        };
        // The bits of a comparison's 16 lanes, lane `i` at bit `i`.
        let bits = |lanes: __m128i| u64::from(_mm_movemask_epi8(lanes) as u16);
        let byte = |b: u8| _mm_set1_epi8(b as i8);
        let mut classes = Self {
            quotes: 0,
            separators: 0,
            spaces: 0,
            others: 0,
        };
        for (k, lanes) in bytes.as_chunks::<16>().0.iter().enumerate() {
            let word = |at: usize| {
                let mut word = [0u8; 8];
                word.copy_from_slice(&lanes[at..at + 8]);
                i64::from_le_bytes(word)
            };
            let v = _mm_set_epi64x(word(8), word(0));
            let shift = 16 * k;
            classes.quotes |= bits(_mm_cmpeq_epi8(v, byte(b'"'))) << shift;
            classes.separators |= bits(_mm_or_si128(
                _mm_cmpeq_epi8(v, byte(b',')),
                _mm_cmpeq_epi8(v, byte(b':')),
            )) << shift;
            classes.spaces |= bits(_mm_cmpeq_epi8(v, byte(b' '))) << shift;
            // Signed: bytes from 0x80 on are negative, so below 0x20 too.
            classes.others |= bits(_mm_or_si128(
                _mm_cmpeq_epi8(v, byte(b'\\')),
                _mm_cmplt_epi8(v, byte(0x20)),
            )) << shift;
        }
        classes
    }
}

/// Bit `i` set when an odd number of bits at or below `i` are set in `x`.
fn prefix_xor(mut x: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        x ^= x << shift;
    }
    x
}

/// Whether `text`, one valid JSON text, is exactly what Python's `json.dumps` writes for its
/// value: ASCII only, no escapes, and outside strings no whitespace but the one space after
/// each `,` and `:`. `false` also for some texts in that form (any with an escape), which the
/// byte-at-a-time writer then copies run by run.
pub fn is_python_form(text: &str) -> bool {
    // All ones when the previous block ended inside a string (from an opening quote up to,
    // not including, its closing one); 1 when it ended with a separator outside strings.
    let mut in_string = 0u64;
    let mut separator_carry = 0u64;
    for block in text.as_bytes().chunks(BLOCK) {
        let classes = Classes::of(block);
        if classes.others != 0 {
            return false;
        }
        let inside = prefix_xor(classes.quotes) ^ in_string;
        let separators = classes.separators & !inside;
        let spaces = classes.spaces & !inside;
        if spaces != (separators << 1 | separator_carry) {
            return false;
        }
        in_string = 0u64.wrapping_sub(inside >> (BLOCK - 1));
        separator_carry = separators >> (BLOCK - 1);
    }
    separator_carry == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{to_python_json, write_python_raw};
    use serde_json::json;

    fn rewritten(text: &str) -> String {
        let mut out = Vec::new();
        write_python_raw(&mut out, text).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sse2_classes_are_the_bytes_classes() {
        // Every byte value at every position of a block, among the bytes that matter.
        let kinds = [
            b'"', b',', b':', b' ', b'\\', b'a', 0x1f, 0x20, 0x7f, 0x80, 0xff,
        ];
        for value in 0..=255u8 {
            let mut block = [0u8; BLOCK];
            for (i, b) in block.iter_mut().enumerate() {
                *b = if i % 3 == 0 {
                    value
                } else {
                    kinds[(i + usize::from(value)) % kinds.len()]
                };
            }
            // SAFETY: SSE2 is part of every x86-64 processor.
            let sse2 = unsafe { Classes::of_sse2(&block) };
            assert_eq!(sse2, Classes::of_bytes(&block), "{value}");
        }
    }

    #[test]
    fn python_printed_values_are_in_form() {
        let long = "x, y: z".repeat(40);
        let values = [
            json!({}),
            json!({"a": [1, 2.5, null, true], "b": {"c": "d, e: f"}, "e": []}),
            json!({"messages": [{"channel": "c01", "text": long, "from": "w", "to": null}]}),
            json!({"q": "\"", "k": long.clone() + ","}),
        ];
        for value in values {
            let text = String::from_utf8(to_python_json(&value)).unwrap();
            assert_eq!(is_python_form(&text), !text.contains('\\'), "{text}");
        }
    }

    #[test]
    fn anything_the_writer_would_change_is_not_in_form() {
        let pad = "p".repeat(60);
        let texts = [
            r#"{"a":1}"#.to_owned(),
            r#"{"a": 1,"b": 2}"#.to_owned(),
            r#"{"a":  1}"#.to_owned(),
            "{\"a\": 1, \"b\":\t2}".to_owned(),
            "{\"a\": \"ü\"}".to_owned(),
            "{\"a\": \"\\u0041\"}".to_owned(),
            "{ \"a\": 1}".to_owned(),
            "{\"a\": [1 , 2]}".to_owned(),
            // A separator in the last byte of a block, its space the first of the next.
            format!("{{\"{pad}\":1}}"),
            format!("{{\"{pad}\":  1}}"),
            format!("{{\"{pad}\": [\"a\",\"b\"]}}"),
        ];
        for text in &texts {
            serde_json::from_str::<serde_json::Value>(text).unwrap();
            if is_python_form(text) {
                assert_eq!(&rewritten(text), text);
            }
        }
        for text in &texts[..8] {
            assert!(!is_python_form(text), "{text}");
        }
        assert!(is_python_form(&format!("{{\"{pad}\": 1}}")));
        assert!(!is_python_form(&texts[9]));
        assert!(!is_python_form(&texts[10]));
    }

    #[test]
    fn in_form_exactly_where_the_writer_copies_the_text_unchanged() {
        // Strings of every length across block edges, with separators, spaces and quotes
        // placed around them: the check never claims a text the writer would change.
        let mut checked = 0;
        for n in 0..140 {
            let s = "a, b:".repeat(n / 5) + &"c".repeat(n % 5);
            for text in [
                format!("{{\"{s}\": [\"{s}\", 1, {{\"k\": \"{s}\"}}]}}"),
                format!("{{\"{s}\":[\"{s}\",1]}}"),
                format!("[\"{s}\" ,\"{s}\"]"),
                format!("[\"{s}\",  \"{s}\"]"),
            ] {
                let same = rewritten(&text) == text;
                assert_eq!(is_python_form(&text), same, "{text}");
                checked += 1;
            }
        }
        assert_eq!(checked, 560);
    }
}
