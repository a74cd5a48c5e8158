//! The ids of episodes and sessions: 32 lowercase hex digits of a random (v4) UUID. Tables of
//! them are keyed by the number the digits spell, which sits in the table itself and hashes in
//! a multiplication or two, rather than by the text (a pointer to chase and SipHash to run on
//! every request).

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

#[cfg(test)]
mod tests {
    use super::*;

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
