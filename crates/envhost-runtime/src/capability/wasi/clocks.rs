//! The episode's WASI clocks, made repeatable: every reading goes through a [`Tape`] that
//! records it while the episode runs live and plays it back while the episode is replayed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock};

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

pub(super) struct WallClock(pub(super) Tape);

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

pub(super) struct MonotonicClock(pub(super) Tape);

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

#[cfg(test)]
mod tests {
    use super::*;

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
