//! Appends a string's bytes between quotes to a buffer with one reservation and, for strings
//! of up to 16 bytes, two overlapping word copies instead of a `memcpy` call: in a guest a call
//! there (and the `Vec` bookkeeping of pushing byte by byte) costs more than the copy itself,
//! and most strings of a data part are short.

use std::ptr;

/// Appends `"`, `bytes` and `"` to `out`.
#[inline]
pub fn push_quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    out.reserve(n + 2);
    let len = out.len();
    // SAFETY: `reserve` made room for `n + 2` bytes after `len`; every write below is within
    // `dst .. dst + n + 2`, every read within `bytes`, and those bytes are initialised before
    // the length covers them.
    unsafe {
        let dst = out.as_mut_ptr().add(len);
        dst.write(b'"');
        copy_short(bytes, dst.add(1));
        dst.add(n + 1).write(b'"');
        out.set_len(len + n + 2);
    }
}

/// Copies `bytes` to `dst`, which must have room for them.
///
/// # Safety
/// `dst .. dst + bytes.len()` is valid for writes and does not overlap `bytes`.
#[inline]
unsafe fn copy_short(bytes: &[u8], dst: *mut u8) {
    let n = bytes.len();
    let src = bytes.as_ptr();
    // SAFETY: each copy reads within `bytes` (the second word ends at its end) and writes the
    // same places of `dst`, within the room the caller guarantees.
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                dst.write(*src);
                dst.add(n / 2).write(*src.add(n / 2));
                dst.add(n - 1).write(*src.add(n - 1));
            }
            4..=7 => {
                ptr::copy_nonoverlapping(src, dst, 4);
                ptr::copy_nonoverlapping(src.add(n - 4), dst.add(n - 4), 4);
            }
            8..=16 => {
                ptr::copy_nonoverlapping(src, dst, 8);
                ptr::copy_nonoverlapping(src.add(n - 8), dst.add(n - 8), 8);
            }
            _ => ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_is_copied_whole_between_quotes() {
        for n in 0..40 {
            let bytes: Vec<u8> = (0..n).map(|i| b'a' + i as u8).collect();
            let mut out = b"x".to_vec();
            push_quoted(&mut out, &bytes);
            let mut expected = b"x\"".to_vec();
            expected.extend_from_slice(&bytes);
            expected.push(b'"');
            assert_eq!(out, expected, "{n}");
        }
    }
}
