//! The episode's WASI random, made repeatable: generators derived from the episode's [`Seed`]
//! and the call's place in its journal, so an instance rebuilt at any entry (by replay, or from a
//! pre-initialised image) draws from there on what the original drew.

use std::sync::{Arc, Mutex, PoisonError};

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng, TryRng};
use sha2::Digest as _;

/// 32 bytes that determine an episode's WASI random (see [`Dice`]); `wasi:random/insecure-seed`
/// answers their first 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Seed(pub [u8; 32]);

impl Seed {
    /// A seed from the system's random source.
    pub fn fresh() -> Self {
        Self(rand::random())
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A seed from 64 hex digits; `None` for anything else.
    pub fn from_hex(text: &str) -> Option<Self> {
        if text.len() != 64 || !text.is_ascii() {
            return None;
        }
        let mut seed = [0u8; 32];
        for (i, byte) in seed.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Self(seed))
    }
}

/// Where a stretch of guest execution stands in its episode: instantiation, or the call at an
/// index of the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// Instantiating (the component's start-up code).
    Start,
    /// Serving the journal's entry at this index.
    Entry(u64),
}

/// The episode's WASI random. Each [`Position`] has generators of its own: ChaCha12 (rand's
/// `StdRng`) keyed with SHA-256 of the seed, the stream (`secure` for `wasi:random/random`,
/// `insecure` for `wasi:random/insecure`) and the position; a generator is keyed on its first
/// draw, so calls that draw nothing cost nothing.
#[derive(Clone)]
pub struct Dice(Arc<Mutex<DiceState>>);

struct DiceState {
    seed: Seed,
    position: Position,
    secure: Option<StdRng>,
    insecure: Option<StdRng>,
}

#[derive(Clone, Copy)]
pub(super) enum Stream {
    Secure,
    Insecure,
}

impl Dice {
    /// Dice for `seed`, at [`Position::Start`].
    pub fn new(seed: Seed) -> Self {
        Self(Arc::new(Mutex::new(DiceState {
            seed,
            position: Position::Start,
            secure: None,
            insecure: None,
        })))
    }

    /// From now on, draws are those of `position`, from their beginning.
    pub fn at(&self, position: Position) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.position = position;
        state.secure = None;
        state.insecure = None;
    }

    fn fill(&self, stream: Stream, bytes: &mut [u8]) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let DiceState {
            seed,
            position,
            secure,
            insecure,
        } = &mut *state;
        let slot = match stream {
            Stream::Secure => secure,
            Stream::Insecure => insecure,
        };
        slot.get_or_insert_with(|| StdRng::from_seed(key(*seed, stream, *position)))
            .fill_bytes(bytes);
    }
}

/// The key of `stream`'s generator at `position`.
fn key(seed: Seed, stream: Stream, position: Position) -> [u8; 32] {
    let mut hash = sha2::Sha256::new();
    hash.update(b"envhost random v1\0");
    hash.update(seed.0);
    hash.update(match stream {
        Stream::Secure => b"secure\0".as_slice(),
        Stream::Insecure => b"insecure\0".as_slice(),
    });
    match position {
        Position::Start => hash.update(b"start"),
        Position::Entry(index) => {
            hash.update(b"entry");
            hash.update(index.to_le_bytes());
        }
    }
    hash.finalize().into()
}

/// One of the dice's streams, as a generator for WASI.
pub(super) struct Draws(pub(super) Dice, pub(super) Stream);

impl TryRng for Draws {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut bytes = [0; 4];
        self.0.fill(self.1, &mut bytes);
        Ok(u32::from_le_bytes(bytes))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut bytes = [0; 8];
        self.0.fill(self.1, &mut bytes);
        Ok(u64::from_le_bytes(bytes))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.0.fill(self.1, dst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_round_trip_through_hex() {
        let seed = Seed::fresh();
        assert_eq!(Seed::from_hex(&seed.to_hex()), Some(seed));
        assert_eq!(Seed::from_hex("00"), None);
        assert_eq!(Seed::from_hex(&"zz".repeat(32)), None);
    }

    #[test]
    fn dice_draw_per_position_and_stream() {
        let seed = Seed::fresh();
        let draw = |dice: &Dice, stream| {
            let mut bytes = [0u8; 16];
            dice.fill(stream, &mut bytes);
            bytes
        };
        let dice = Dice::new(seed);
        dice.at(Position::Entry(7));
        let (first, second) = (draw(&dice, Stream::Secure), draw(&dice, Stream::Secure));
        assert_ne!(first, second, "a position's draws go on");
        assert_ne!(first, draw(&dice, Stream::Insecure), "streams differ");

        let rebuilt = Dice::new(seed);
        rebuilt.at(Position::Entry(7));
        assert_eq!(
            draw(&rebuilt, Stream::Secure),
            first,
            "a position starts afresh"
        );
        rebuilt.at(Position::Entry(8));
        assert_ne!(draw(&rebuilt, Stream::Secure), first, "positions differ");
        let other = Dice::new(Seed::fresh());
        other.at(Position::Entry(7));
        assert_ne!(draw(&other, Stream::Secure), first, "seeds differ");
    }
}
