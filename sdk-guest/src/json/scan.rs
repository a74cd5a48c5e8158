//! Where the first byte a JSON string must escape (`"`, `\` or a control character below
//! `0x20`) is, checked 16 bytes at a time: whole 16-byte chunks, a last chunk that overlaps
//! the one before, and two overlapping words for strings shorter than 16 bytes, so that no
//! string is checked a byte at a time unless it is shorter than 4 bytes. On wasm32 with
//! SIMD128 a chunk is one comparison; compiled code there runs a byte-at-a-time loop several
//! times slower than native, and nearly every byte of a data part's JSON is in a string.
//! Elsewhere (this crate's native tests) a chunk is checked a byte at a time.

/// The index of the first byte of `bytes` that JSON escapes; `bytes.len()` if there is none.
#[inline]
pub fn first_escape(bytes: &[u8]) -> usize {
    let n = bytes.len();
    if n < 4 {
        return bytes.iter().position(|&b| is_escaped(b)).unwrap_or(n);
    }
    if n < 16 {
        let mask = if n < 8 {
            lanes::of_u32s(word(bytes, 0), word(bytes, n - 4)) & 0x0f0f
        } else {
            lanes::of_u64s(word(bytes, 0), word(bytes, n - 8))
        };
        let width = if n < 8 { 4 } else { 8 };
        return match (mask & 0xff, mask >> 8) {
            (0, 0) => n,
            (0, high) => n - width + high.trailing_zeros() as usize,
            (low, _) => low.trailing_zeros() as usize,
        };
    }
    let mut at = 0;
    while at + 16 <= n {
        let mask = lanes::of_chunk(word(bytes, at));
        if mask != 0 {
            return at + mask.trailing_zeros() as usize;
        }
        at += 16;
    }
    if at == n {
        return n;
    }
    // The last 16 bytes, less those the loop checked.
    let checked = 16 - (n - at);
    let mask = lanes::of_chunk(word(bytes, n - 16)) >> checked << checked;
    if mask == 0 {
        n
    } else {
        n - 16 + mask.trailing_zeros() as usize
    }
}

/// Whether JSON escapes `byte` in a string.
fn is_escaped(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// The `N` bytes of `bytes` from `at`.
#[inline]
fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut word = [0; N];
    word.copy_from_slice(&bytes[at..at + N]);
    word
}

/// 16 lanes of one byte each, as one SIMD128 value; each function answers bit `i` set when
/// lane `i` holds a byte JSON escapes.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod lanes {
    use core::arch::wasm32::{
        u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, u32x4, u64x2, v128, v128_load, v128_or,
    };

    /// Lanes 0–7 hold `low`, lanes 8–15 `high`.
    #[inline]
    pub fn of_u64s(low: [u8; 8], high: [u8; 8]) -> u16 {
        escaped(u64x2(u64::from_le_bytes(low), u64::from_le_bytes(high)))
    }

    /// Lanes 0–3 hold `low`, lanes 8–11 `high`; the others a byte not escaped.
    #[inline]
    pub fn of_u32s(low: [u8; 4], high: [u8; 4]) -> u16 {
        const PLAIN: u32 = u32::from_le_bytes(*b"aaaa");
        escaped(u32x4(
            u32::from_le_bytes(low),
            PLAIN,
            u32::from_le_bytes(high),
            PLAIN,
        ))
    }

    #[inline]
    pub fn of_chunk(chunk: [u8; 16]) -> u16 {
        // SAFETY: the 16 bytes read are `chunk`'s own; `v128_load` needs no alignment.
        escaped(unsafe { v128_load(chunk.as_ptr().cast::<v128>()) })
    }

    #[inline]
    fn escaped(v: v128) -> u16 {
        let quote_or_backslash = v128_or(
            u8x16_eq(v, u8x16_splat(b'"')),
            u8x16_eq(v, u8x16_splat(b'\\')),
        );
        u8x16_bitmask(v128_or(quote_or_backslash, u8x16_lt(v, u8x16_splat(0x20))))
    }
}

/// [`lanes`] a byte at a time.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod lanes {
    pub fn of_u64s(low: [u8; 8], high: [u8; 8]) -> u16 {
        let mut chunk = [0; 16];
        chunk[..8].copy_from_slice(&low);
        chunk[8..].copy_from_slice(&high);
        of_chunk(chunk)
    }

    pub fn of_u32s(low: [u8; 4], high: [u8; 4]) -> u16 {
        let mut chunk = [b'a'; 16];
        chunk[..4].copy_from_slice(&low);
        chunk[8..12].copy_from_slice(&high);
        of_chunk(chunk)
    }

    pub fn of_chunk(chunk: [u8; 16]) -> u16 {
        chunk.iter().enumerate().fold(0, |mask, (i, &b)| {
            mask | u16::from(super::is_escaped(b)) << i
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_escaped_byte_at_every_length_and_place() {
        for n in 0..70 {
            let clean = vec![b'x'; n];
            assert_eq!(first_escape(&clean), n, "{n}");
            for at in 0..n {
                for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                    let mut bytes = clean.clone();
                    bytes[at] = special;
                    if at + 1 < n {
                        bytes[n - 1] = b'"';
                    }
                    assert_eq!(first_escape(&bytes), at, "{n} {at} {special}");
                }
            }
        }
    }

    #[test]
    fn bytes_that_are_not_escaped_are_not_found() {
        let bytes: Vec<u8> = (0x20..=0xffu8).filter(|b| !is_escaped(*b)).collect();
        for n in 0..bytes.len() {
            assert_eq!(first_escape(&bytes[..n]), n);
            assert_eq!(first_escape(&bytes[bytes.len() - n..]), n);
        }
    }
}
