//! The ids of episodes and sessions: 32 lowercase hex digits of a random (v4) UUID. Tables of
//! them are keyed by the number the digits spell, which sits in the table itself and hashes in
//! a multiplication or two, rather than by the text (a pointer to chase and SipHash to run on
//! every request). And episodes' secrets, which an agent's URL carries beside the id.

use std::collections::HashMap;

/// A table by id.
pub(crate) type IdMap<V> = HashMap<u128, V, rustc_hash::FxBuildHasher>;

/// A fresh id: its key in an [`IdMap`] and its text.
pub(crate) fn fresh() -> (u128, String) {
    let uuid = uuid::Uuid::new_v4();
    let mut text = [0; uuid::fmt::Simple::LENGTH];
    (
        uuid.as_u128(),
        uuid.simple().encode_lower(&mut text).to_owned(),
    )
}

/// The key of `id` in an [`IdMap`]; none for text that is not 32 lowercase hex digits (no id
/// this host gives out).
pub(crate) fn key(id: &str) -> Option<u128> {
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if id.len() != uuid::fmt::Simple::LENGTH || !id.bytes().all(hex) {
        return None;
    }
    u128::from_str_radix(id, 16).ok()
}

/// An episode's own secret: 128 bits from the thread's cryptographically secure generator
/// (`rand`'s, seeded by the operating system), which the episode's agent URL carries as 32
/// lowercase hex digits (serve.md#access).
#[derive(Clone, Copy)]
pub struct Secret([u8; 16]);

impl Secret {
    /// A fresh secret.
    pub fn fresh() -> Self {
        Self(rand::random())
    }

    /// The secret as 32 lowercase hex digits.
    pub fn to_hex(self) -> String {
        use std::fmt::Write as _;
        self.0.iter().fold(String::with_capacity(32), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
    }

    /// Whether `presented` is this secret's hex text, compared in constant time: its time
    /// depends on neither how much of it is right nor, for text of any length, on the secret.
    pub fn matches(&self, presented: &str) -> bool {
        let digit = |b: u8| match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            _ => None,
        };
        let mut decoded = [0u8; 16];
        let mut well_formed = presented.len() == 32;
        if well_formed {
            for (byte, pair) in decoded
                .iter_mut()
                .zip(presented.as_bytes().as_chunks::<2>().0)
            {
                match (digit(pair[0]), digit(pair[1])) {
                    (Some(high), Some(low)) => *byte = high << 4 | low,
                    _ => well_formed = false,
                }
            }
        }
        let equal: bool = subtle::ConstantTimeEq::ct_eq(&self.0[..], &decoded[..]).into();
        equal && well_formed
    }
}

impl std::fmt::Debug for Secret {
    /// Never the secret itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_matches_its_own_hex_only() {
        let secret = Secret::fresh();
        let hex = secret.to_hex();
        assert_eq!(hex.len(), 32);
        assert!(secret.matches(&hex));
        assert!(!Secret([0xab; 16]).matches(&"AB".repeat(16)));
        assert!(!secret.matches(&hex[..31]));
        assert!(!secret.matches(&format!("{hex}0")));
        assert!(!secret.matches(&Secret::fresh().to_hex()));
        assert!(!secret.matches(""));
        assert!(!Secret([0; 16]).matches(&"g".repeat(32)));
        assert!(Secret([0; 16]).matches(&"0".repeat(32)));
        assert_eq!(format!("{secret:?}"), "Secret(..)");
    }

    #[test]
    fn fresh_ids_are_keys_and_other_text_is_not() {
        let (number, id) = fresh();
        assert_eq!(key(&id), Some(number));
        assert_ne!(fresh().1, id);
        let lower = "0123456789abcdef0123456789abcdef";
        assert_eq!(key(lower), Some(0x0123456789abcdef0123456789abcdef));
        assert_eq!(key(&lower.to_uppercase()), None);
        assert_eq!(key("0123"), None);
        assert_eq!(key(&format!("+{}", &id[1..])), None);
        assert_eq!(key(&"g".repeat(32)), None);
    }
}
