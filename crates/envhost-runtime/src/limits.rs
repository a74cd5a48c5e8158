//! What one episode may use, and how its store enforces it: a cap on linear memory (a
//! [`ResourceLimiter`] that traps with [`MemoryExhausted`]) and a CPU deadline per call, checked
//! at each epoch tick.

use std::time::{Duration, Instant};

use wasmtime::ResourceLimiter;

/// How often the epoch advances while guests run: the granularity of CPU deadlines, and the
/// longest a guest runs before it yields to other calls.
pub const EPOCH_TICK: Duration = Duration::from_micros(250);

/// How often the epoch advances while no guest runs but one ran in the last [`IDLE_AFTER`]
/// (a call that starts then may run up to one such tick before its first yield): between the
/// calls of a busy host the ticker wakes a quarter as often as during them.
pub const BETWEEN_CALLS_TICK: Duration = Duration::from_millis(1);

/// How often the epoch advances once no guest has run for [`IDLE_AFTER`] (a call that starts
/// then may run one such tick before its first yield).
pub const IDLE_TICK: Duration = Duration::from_millis(10);

/// How long without a guest running before the epoch slows to [`IDLE_TICK`].
pub const IDLE_AFTER: Duration = Duration::from_millis(100);

/// What one episode may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory per instance, in bytes (all memories together).
    pub memory_bytes: usize,
    /// Guest execution time per call, on the wall clock from the call's start: the call fails
    /// with [`crate::Fault::Deadline`] at the first epoch tick ([`EPOCH_TICK`]) after it.
    pub cpu_deadline: Duration,
    /// Wall time a caller waits for a call, queueing included: past it the caller gets
    /// [`crate::CallError::Timeout`]; a call still waiting for its turn then never runs, one
    /// that started runs to its end or its deadline.
    pub call_timeout: Duration,
    /// Calls that may wait for the episode at once, besides the one running (at least 1); past
    /// it a call is refused with [`crate::CallError::Busy`].
    pub max_queued_calls: usize,
}

impl Default for Limits {
    /// 256 MiB of memory, 10 s of CPU and 60 s of wall time per call, 64 calls queued.
    fn default() -> Self {
        Self {
            memory_bytes: 256 << 20,
            cpu_deadline: Duration::from_secs(10),
            call_timeout: Duration::from_secs(60),
            max_queued_calls: 64,
        }
    }
}

/// The error a guest's memory growth past its cap traps with.
#[derive(Debug, thiserror::Error)]
#[error("the guest asked for {desired} bytes of memory in all; its cap is {cap}")]
pub struct MemoryExhausted {
    /// The total the guest asked for, in bytes.
    pub desired: usize,
    /// The cap, in bytes.
    pub cap: usize,
}

/// The most elements a guest table may grow to.
const TABLE_ELEMENTS_CAP: usize = 1 << 20;

/// Caps a store's linear memories in total, and traps with [`MemoryExhausted`] past the cap so
/// the host can tell an out-of-memory guest from other traps.
pub(crate) struct MemoryCap {
    cap: usize,
    /// Bytes of linear memory granted so far, all memories together.
    used: usize,
}

impl MemoryCap {
    /// A cap of `cap` bytes, none used yet.
    pub(crate) fn new(cap: usize) -> Self {
        Self { cap, used: 0 }
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let used = self.used.saturating_sub(current).saturating_add(desired);
        if used > self.cap {
            return Err(MemoryExhausted {
                desired: used,
                cap: self.cap,
            }
            .into());
        }
        self.used = used;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= TABLE_ELEMENTS_CAP)
    }
}

/// The CPU deadline of the call being served.
pub(crate) struct Deadline {
    /// The call's allowance.
    cpu_deadline: Duration,
    /// When it passes (`None` until the call's first epoch tick).
    at: Option<Instant>,
}

impl Deadline {
    /// A deadline of `cpu_deadline` per call, not yet armed.
    pub(crate) fn new(cpu_deadline: Duration) -> Self {
        Self {
            cpu_deadline,
            at: None,
        }
    }

    /// Starts a call's allowance of `cpu_deadline`; it is dated at the call's first tick.
    pub(crate) fn arm(&mut self, cpu_deadline: Duration) {
        self.cpu_deadline = cpu_deadline;
        self.at = None;
    }

    /// Moves a dated deadline `by` later: time the guest spent waiting on its caller (a client
    /// request) is not its own.
    pub(crate) fn shift(&mut self, by: Duration) {
        if let Some(at) = self.at {
            self.at = Some(at.checked_add(by).unwrap_or(at));
        }
    }

    /// Whether the call has run past its deadline. The first tick of a call sets the deadline
    /// one tick before now plus the allowance (the closest it can know of the call's start).
    pub(crate) fn passed(&mut self) -> bool {
        let now = Instant::now();
        let cpu_deadline = self.cpu_deadline;
        let at = *self.at.get_or_insert_with(|| {
            (now - EPOCH_TICK)
                .checked_add(cpu_deadline)
                .unwrap_or(now + Duration::from_secs(365 * 24 * 3600))
        });
        now >= at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memories_share_one_cap_and_past_it_trap_with_a_typed_error() {
        let mut cap = MemoryCap::new(3 << 20);
        assert!(cap.memory_growing(0, 1 << 20, None).unwrap());
        assert!(cap.memory_growing(1 << 20, 2 << 20, None).unwrap());
        let e = cap.memory_growing(0, 2 << 20, None).unwrap_err();
        assert!(e.downcast_ref::<MemoryExhausted>().is_some());
        assert!(cap.memory_growing(0, 1 << 20, None).unwrap());
    }

    #[test]
    fn a_deadline_passes_its_allowance_after_the_first_tick() {
        let mut deadline = Deadline::new(Duration::ZERO);
        deadline.arm(Duration::from_secs(3600));
        assert!(!deadline.passed());
        deadline.arm(Duration::ZERO);
        assert!(deadline.passed(), "no allowance: past at the first tick");
    }
}
