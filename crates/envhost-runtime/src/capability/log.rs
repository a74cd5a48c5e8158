//! The `log` capability: `agentenv:environment/log`, the guest's log records written to the
//! host's log (target `guest`, with the episode's label), at most 100 a second per episode; the
//! records dropped past that are counted on the next one kept. A record kept during a call with
//! a [`Peer`](crate::call::Peer) also goes to it (protocol.md#logging).

use std::time::Instant;

use wasmtime::component::{HasData, Linker};

use crate::bindings::agentenv::environment::log;
use crate::capability::context::Context;

/// Guest log records allowed per second (a token bucket of this size, refilled continuously).
const RECORDS_PER_SECOND: f64 = 100.0;

/// A token bucket.
struct Budget {
    tokens: f64,
    last: Instant,
    dropped: u64,
}

impl Budget {
    fn new() -> Self {
        Self {
            tokens: RECORDS_PER_SECOND,
            last: Instant::now(),
            dropped: 0,
        }
    }

    /// Takes a token; false (and counts a drop) when none is left.
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.last).as_secs_f64() * RECORDS_PER_SECOND;
        self.tokens = (self.tokens + refill).min(RECORDS_PER_SECOND);
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

/// The `log` capability's state in a store: the episode's label and its rate limit.
pub struct Log {
    /// The episode's name in the host's log.
    label: String,
    budget: Budget,
}

impl Log {
    /// The log of the episode labelled `label`.
    pub(crate) fn new(label: String) -> Self {
        Self {
            label,
            budget: Budget::new(),
        }
    }
}

/// The `log` capability's view of a store's data: its own state, and the call being served,
/// whose peer its records also go to.
pub struct LogView<'a> {
    /// The log's state.
    pub log: &'a mut Log,
    /// The call being served.
    pub context: &'a Context,
}

/// [`HasData`] for [`LogView`].
pub struct LogData;

impl HasData for LogData {
    type Data<'a> = LogView<'a>;
}

impl log::Host for LogView<'_> {
    fn write(&mut self, level: log::Level, message: String, fields: Option<String>) {
        if !self.log.budget.take() {
            return;
        }
        if let Some(peer) = self.context.peer() {
            let level = match level {
                log::Level::Trace => tracing::Level::TRACE,
                log::Level::Debug => tracing::Level::DEBUG,
                log::Level::Info => tracing::Level::INFO,
                log::Level::Warn => tracing::Level::WARN,
                log::Level::Error => tracing::Level::ERROR,
            };
            peer.log(level, &message, fields.as_deref());
        }
        let dropped = std::mem::take(&mut self.log.budget.dropped);
        let episode = self.log.label.as_str();
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

/// Adds `agentenv:environment/log` to `linker`, its view of a store's data reached through
/// `get`.
///
/// # Errors
/// wasmtime's, when the interface is defined twice.
pub fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> LogView<'_>,
) -> wasmtime::Result<()> {
    log::add_to_linker::<T, LogData>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_drops_bursts_and_counts_them() {
        let mut budget = Budget::new();
        let kept = (0..150).filter(|_| budget.take()).count();
        assert!((100..=101).contains(&kept), "kept {kept}");
        assert!(budget.dropped >= 49);
    }

    #[test]
    fn a_dropped_record_is_counted_on_the_next_one_kept() {
        let mut log = Log::new("e1".into());
        let context = Context::default();
        let mut view = LogView {
            log: &mut log,
            context: &context,
        };
        for _ in 0..150 {
            log::Host::write(&mut view, log::Level::Debug, "spam".into(), None);
        }
        assert!(view.log.budget.dropped >= 49);
        view.log.budget.tokens = 1.0;
        log::Host::write(&mut view, log::Level::Debug, "kept".into(), None);
        assert_eq!(view.log.budget.dropped, 0);
    }
}
