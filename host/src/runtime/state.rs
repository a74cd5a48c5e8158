//! What a store holds for its episode: WASI with nothing granted, the memory cap, the call being
//! served (for the `context` import), and the `log` import's rate limit.

use std::time::{Duration, Instant};

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::determinism::{self, Sources};

use super::bindings::agentenv::environment::{context, log, types};
use super::engine::Limits;
use super::episode::CallContext;

/// The error a guest's memory growth past its cap traps with.
#[derive(Debug, thiserror::Error)]
#[error("the guest asked for {desired} bytes of memory in all; its cap is {cap}")]
pub struct MemoryExhausted {
    /// The total the guest asked for, in bytes.
    pub desired: usize,
    /// The cap, in bytes.
    pub cap: usize,
}

/// Caps the store's linear memories in total, and traps with [`MemoryExhausted`] past the cap so
/// the host can tell an out-of-memory guest from other traps.
struct MemoryCap {
    cap: usize,
    /// Bytes of linear memory granted so far, all memories together.
    used: usize,
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

/// The most elements a guest table may grow to.
const TABLE_ELEMENTS_CAP: usize = 1 << 20;

/// Guest log records allowed per second (a token bucket of this size, refilled continuously).
const LOG_RECORDS_PER_SECOND: f64 = 100.0;

/// A token bucket for the `log` import.
struct LogBudget {
    tokens: f64,
    last: Instant,
    dropped: u64,
}

impl LogBudget {
    fn new() -> Self {
        Self {
            tokens: LOG_RECORDS_PER_SECOND,
            last: Instant::now(),
            dropped: 0,
        }
    }

    /// Takes a token; false (and counts a drop) when none is left.
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.last).as_secs_f64() * LOG_RECORDS_PER_SECOND;
        self.tokens = (self.tokens + refill).min(LOG_RECORDS_PER_SECOND);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            self.dropped += 1;
            false
        }
    }
}

/// The data of one episode's store.
pub struct EpisodeState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryCap,
    log: LogBudget,
    /// The episode's name in the host's log.
    label: String,
    /// The call being served, when it is a tool or extension call.
    pub(crate) call: Option<CallContext>,
    /// The current call's CPU deadline.
    cpu_deadline: Duration,
    /// When it passes (`None` until the call's first epoch tick).
    deadline: Option<Instant>,
}

impl EpisodeState {
    /// A state with no WASI grants (no filesystem, network, environment variables or stdio),
    /// WASI random and clocks from `sources`.
    pub(crate) fn new(label: String, limits: &Limits, sources: &Sources) -> Self {
        Self {
            wasi: determinism::wasi_ctx(sources),
            table: ResourceTable::new(),
            memory: MemoryCap {
                cap: limits.memory_bytes,
                used: 0,
            },
            log: LogBudget::new(),
            label,
            call: None,
            cpu_deadline: limits.cpu_deadline,
            deadline: None,
        }
    }

    /// Arms a call's CPU deadline in `store`: the first epoch callback comes only after a whole
    /// tick of guest execution (so a call shorter than a tick never stops to yield, never waits
    /// behind another task for it, and never reads the clock for its deadline); that callback
    /// sets the deadline `limits.cpu_deadline` after the call's start (one tick before it, the
    /// closest it can know), then one comes every tick, and the first after the deadline
    /// interrupts the guest.
    pub(crate) fn arm_deadline(store: &mut wasmtime::Store<Self>, limits: &Limits) {
        let state = store.data_mut();
        state.cpu_deadline = limits.cpu_deadline;
        state.deadline = None;
        store.set_epoch_deadline(2);
    }

    /// Whether the current call has run past its CPU deadline (set on the first tick).
    pub(crate) fn past_deadline(&mut self) -> bool {
        let now = Instant::now();
        let deadline = *self.deadline.get_or_insert_with(|| {
            (now - super::engine::EPOCH_TICK)
                .checked_add(self.cpu_deadline)
                .unwrap_or(now + Duration::from_secs(365 * 24 * 3600))
        });
        now >= deadline
    }

    /// The store's resource limiter.
    pub fn limiter(&mut self) -> &mut dyn ResourceLimiter {
        &mut self.memory
    }
}

impl WasiView for EpisodeState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for EpisodeState {}

impl context::Host for EpisodeState {
    fn current(&mut self) -> Option<context::CallContext> {
        self.call.as_ref().map(|c| context::CallContext {
            caller: context::Caller {
                role: c.caller.role.clone(),
                session: c.caller.session.clone(),
            },
            tool: c.tool.clone(),
            arguments: c.arguments.clone(),
            call_id: c.call_id.clone(),
        })
    }
}

impl log::Host for EpisodeState {
    fn write(&mut self, level: log::Level, message: String, fields: Option<String>) {
        if !self.log.take() {
            return;
        }
        let dropped = std::mem::take(&mut self.log.dropped);
        let episode = self.label.as_str();
        let fields = fields.unwrap_or_default();
        match level {
            log::Level::Trace => {
                tracing::trace!(target: "guest", episode, dropped, fields, "{message}");
            }
            log::Level::Debug => {
                tracing::debug!(target: "guest", episode, dropped, fields, "{message}");
            }
            log::Level::Info => {
                tracing::info!(target: "guest", episode, dropped, fields, "{message}");
            }
            log::Level::Warn => {
                tracing::warn!(target: "guest", episode, dropped, fields, "{message}");
            }
            log::Level::Error => {
                tracing::error!(target: "guest", episode, dropped, fields, "{message}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_budget_drops_bursts_and_counts_them() {
        let mut budget = LogBudget::new();
        let kept = (0..150).filter(|_| budget.take()).count();
        assert!((100..=101).contains(&kept), "kept {kept}");
        assert!(budget.dropped >= 49);
    }

    #[test]
    fn memories_share_one_cap_and_past_it_trap_with_a_typed_error() {
        let mut cap = MemoryCap {
            cap: 3 << 20,
            used: 0,
        };
        assert!(cap.memory_growing(0, 1 << 20, None).unwrap());
        assert!(cap.memory_growing(1 << 20, 2 << 20, None).unwrap());
        let e = cap.memory_growing(0, 2 << 20, None).unwrap_err();
        assert!(e.downcast_ref::<MemoryExhausted>().is_some());
        assert!(cap.memory_growing(0, 1 << 20, None).unwrap());
    }
}
