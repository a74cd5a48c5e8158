//! What a guest can observe of the world besides its calls, made repeatable: WASI random comes
//! from [`Dice`], generators derived from the episode's [`Seed`] and the call's place in the
//! journal, and WASI clocks go through a [`Tape`] that records every reading while an episode
//! runs live and plays the readings back while it is replayed. So the same seed, calls and tape
//! always give the same guest behaviour, and an instance rebuilt at any entry of its journal (by
//! replay, or from a pre-initialised image) draws from there on what the original drew.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng, TryRng};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtx};

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

/// Where everything an episode's guest observes besides its calls comes from: its seed, the
/// dice drawn from it, and its clock tape. Clones share the dice and the tape.
#[derive(Clone)]
pub(crate) struct Sources {
    /// The episode's seed.
    pub(crate) seed: Seed,
    /// WASI random.
    pub(crate) dice: Dice,
    /// WASI clocks.
    pub(crate) tape: Tape,
}

impl Sources {
    /// The sources of an episode with `seed`, at its start, with an idle tape.
    pub(crate) fn new(seed: Seed) -> Self {
        Self {
            seed,
            dice: Dice::new(seed),
            tape: Tape::default(),
        }
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
enum Stream {
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
struct Draws(Dice, Stream);

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

/// One clock reading a guest made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// `wasi:clocks/wall-clock.now`, in nanoseconds since the Unix epoch.
    Wall(u64),
    /// `wasi:clocks/monotonic-clock.now`, in nanoseconds.
    Monotonic(u64),
}

/// Where an episode's clock readings come from.
#[derive(Clone, Default)]
pub struct Tape(Arc<Mutex<TapeState>>);

#[derive(Default)]
struct TapeState {
    /// Readings still to play back; empty when live.
    replay: VecDeque<Reading>,
    /// True while playing back.
    replaying: bool,
    /// Readings made since the last [`Tape::take`], live or played back.
    recorded: Vec<Reading>,
    /// Readings asked for past the end of, or of another kind than, the playback.
    diverged: bool,
    /// The monotonic clock's live value is this plus the time since `started` (`None` while
    /// playing back): after a replay it continues from the last reading played back instead of
    /// going back in time.
    monotonic_base: u64,
    started: Option<Instant>,
}

impl Tape {
    /// From now on, readings are the real clocks' (the monotonic one continuing from the last
    /// reading played back).
    pub fn go_live(&self) {
        let mut state = self.lock();
        state.replay.clear();
        state.replaying = false;
        state.monotonic_base = state.monotonic_now();
        state.started = Some(Instant::now());
    }

    /// From now on, readings are the real clocks', the monotonic one continuing from
    /// `monotonic` nanoseconds (an image's last reading).
    pub fn resume(&self, monotonic: u64) {
        let mut state = self.lock();
        state.monotonic_base = state.monotonic_base.max(monotonic);
        drop(state);
        self.go_live();
    }

    /// Where the monotonic clock continues from: after a playback, its last reading.
    pub fn monotonic_base(&self) -> u64 {
        self.lock().monotonic_base
    }

    /// From now on, readings come from `readings`, in order.
    pub fn play(&self, readings: &[Reading]) {
        let mut state = self.lock();
        state.replay = readings.iter().copied().collect();
        state.replaying = true;
        state.diverged = false;
        state.monotonic_base = state.monotonic_now();
        state.started = None;
    }

    /// The readings made since the last call, and whether they departed from the playback
    /// (more readings than played back, another kind, or fewer).
    pub fn take(&self) -> (Vec<Reading>, bool) {
        let mut state = self.lock();
        let diverged = state.diverged || (state.replaying && !state.replay.is_empty());
        state.diverged = false;
        (std::mem::take(&mut state.recorded), diverged)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TapeState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn read(
        &self,
        kind: fn(&Reading) -> bool,
        live: impl FnOnce(&TapeState) -> Reading,
    ) -> Reading {
        let mut state = self.lock();
        let reading = if state.replaying {
            match state.replay.pop_front() {
                Some(reading) if kind(&reading) => reading,
                other => {
                    state.diverged = true;
                    other.unwrap_or_else(|| live(&state))
                }
            }
        } else {
            live(&state)
        };
        if let (true, Reading::Monotonic(ns)) = (state.replaying, reading) {
            state.monotonic_base = state.monotonic_base.max(ns);
        }
        state.recorded.push(reading);
        reading
    }
}

impl TapeState {
    fn monotonic_now(&self) -> u64 {
        let since = self.started.map_or(0, |started| {
            u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX)
        });
        self.monotonic_base.saturating_add(since)
    }
}

struct WallClock(Tape);

impl HostWallClock for WallClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        let reading = self.0.read(
            |r| matches!(r, Reading::Wall(_)),
            |_| {
                let since = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default();
                Reading::Wall(u64::try_from(since.as_nanos()).unwrap_or(u64::MAX))
            },
        );
        match reading {
            Reading::Wall(ns) | Reading::Monotonic(ns) => Duration::from_nanos(ns),
        }
    }
}

struct MonotonicClock(Tape);

impl HostMonotonicClock for MonotonicClock {
    fn resolution(&self) -> u64 {
        1
    }

    fn now(&self) -> u64 {
        let reading = self.0.read(
            |r| matches!(r, Reading::Monotonic(_)),
            |state| Reading::Monotonic(state.monotonic_now()),
        );
        match reading {
            Reading::Monotonic(ns) | Reading::Wall(ns) => ns,
        }
    }
}

/// A WASI context with no grants (no filesystem, network, environment variables or stdio) whose
/// random and clocks come from `sources`.
pub(crate) fn wasi_ctx(sources: &Sources) -> WasiCtx {
    let mut insecure_seed = [0u8; 16];
    insecure_seed.copy_from_slice(&sources.seed.0[..16]);
    let tape = &sources.tape;
    WasiCtx::builder()
        .secure_random(Draws(sources.dice.clone(), Stream::Secure))
        .insecure_random(Draws(sources.dice.clone(), Stream::Insecure))
        .insecure_random_seed(u128::from_le_bytes(insecure_seed))
        .wall_clock(WallClock(tape.clone()))
        .monotonic_clock(MonotonicClock(tape.clone()))
        .build()
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

    #[test]
    fn a_tape_records_live_readings_and_plays_them_back() {
        let tape = Tape::default();
        tape.go_live();
        let wall = WallClock(tape.clone());
        let monotonic = MonotonicClock(tape.clone());
        let (w, m1, m2) = (wall.now(), monotonic.now(), monotonic.now());
        assert!(m2 >= m1);
        let (recorded, diverged) = tape.take();
        assert!(!diverged);
        assert_eq!(recorded.len(), 3);

        let replayed = Tape::default();
        replayed.play(&recorded);
        let (wall, monotonic) = (
            WallClock(replayed.clone()),
            MonotonicClock(replayed.clone()),
        );
        assert_eq!((wall.now(), monotonic.now(), monotonic.now()), (w, m1, m2));
        assert_eq!(replayed.take(), (recorded.clone(), false));

        replayed.play(&recorded);
        let _ = monotonic.now();
        assert!(replayed.take().1, "a reading of another kind diverges");
        replayed.play(&recorded[..1]);
        let _ = (wall.now(), wall.now());
        assert!(replayed.take().1, "a reading past the playback diverges");
        replayed.play(&recorded);
        assert!(replayed.take().1, "readings left unplayed diverge");

        replayed.go_live();
        assert!(
            monotonic.now() >= m2,
            "live time continues from the playback"
        );
    }
}
