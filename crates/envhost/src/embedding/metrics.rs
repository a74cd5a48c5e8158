//! The host's metrics, in the Prometheus text format (`GET /metrics`): episodes live, created,
//! evicted and dropped; calls by kind and outcome; guest faults by kind; call latency; pool
//! occupancy; restores by source and the pre-initialised images made.

use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use std::fmt::Write as _;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use envhost_runtime::{CallError, Fault};

/// Label values in lower snake case, as Prometheus has them.
macro_rules! label_values {
    ($ty:ty { $($variant:ident => $text:literal),* $(,)? }) => {
        impl EncodeLabelValue for $ty {
            fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
                encoder.write_str(match self { $(Self::$variant => $text),* })
            }
        }
    };
}

/// What a call was.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
#[repr(usize)]
pub enum CallKind {
    /// `data/reset`
    Reset,
    /// `data/add`
    Add,
    /// `data/get`
    Get,
    /// `tools/call`
    Tool,
    /// An extension method.
    Extension,
    /// An MCP request beyond tools (resources, prompts, completion).
    Mcp,
}

/// How a call ended.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
#[repr(usize)]
enum Outcome {
    /// Answered.
    Ok,
    /// Answered with the guest's coded error.
    Error,
    /// The guest faulted (trap, deadline, memory).
    Fault,
    /// Refused: the episode's queue was full.
    Busy,
    /// No answer within the call timeout.
    Timeout,
    /// The episode could not serve it (instantiation failed, or it stopped).
    Unavailable,
    /// Its caller cancelled it, and it was stopped.
    Cancelled,
}

/// What faulted.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum FaultKind {
    /// A trap.
    Trap,
    /// The CPU deadline.
    Deadline,
    /// The memory cap.
    OutOfMemory,
}

/// Where a restored episode's state came from.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) enum RestoreSource {
    /// Its journal, replayed.
    Replay,
    /// A pre-initialised image.
    Image,
}

/// How making a snapshot's image ended.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) enum ImageOutcome {
    /// Made.
    Made,
    /// The component cannot be pre-initialised; its restores replay.
    Unsupported,
    /// It failed (a replay that diverged, a compile error); a later restore tries again.
    Failed,
}

label_values!(RestoreSource { Replay => "replay", Image => "image" });
label_values!(ImageOutcome { Made => "made", Unsupported => "unsupported", Failed => "failed" });
label_values!(CallKind { Reset => "reset", Add => "add", Get => "get", Tool => "tool", Extension => "extension", Mcp => "mcp" });
label_values!(Outcome {
    Ok => "ok", Error => "error", Fault => "fault", Busy => "busy", Timeout => "timeout",
    Unavailable => "unavailable", Cancelled => "cancelled",
});
label_values!(FaultKind { Trap => "trap", Deadline => "deadline", OutOfMemory => "out_of_memory" });

/// The number of [`CallKind`]s and of [`Outcome`]s (each enum's last variant is its largest).
const KINDS: usize = CallKind::Mcp as usize + 1;
const OUTCOMES: usize = Outcome::Cancelled as usize + 1;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    kind: CallKind,
    outcome: Outcome,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: CallKind,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ImageLabel {
    outcome: ImageOutcome,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RestoreLabel {
    from: RestoreSource,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FaultLabel {
    kind: FaultKind,
}

fn latency_histogram() -> Histogram {
    // 25 µs to ~26 s.
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        25e-6, 2.0, 21,
    ))
}

/// The host's metrics.
pub struct Metrics {
    registry: Registry,
    /// Episodes alive.
    pub(super) live: Gauge,
    /// Episodes created.
    pub(super) created: Counter,
    /// Episodes evicted for idleness.
    pub(super) evicted: Counter,
    /// Episodes dropped on request.
    pub(super) dropped: Counter,
    /// Creations refused at the episode cap.
    pub(super) refused: Counter,
    images: Family<ImageLabel, Counter>,
    calls: Family<CallLabels, Counter>,
    faults: Family<FaultLabel, Counter>,
    restores: Family<RestoreLabel, Counter>,
    latency: Family<KindLabel, Histogram>,
    /// The series of `calls` and `latency` each call updates, looked up in their families
    /// once, on first use (a family lookup hashes the labels under a lock).
    call_series: [[OnceLock<Counter>; OUTCOMES]; KINDS],
    latency_series: [OnceLock<Histogram>; KINDS],
    pool_capacity: Gauge<f64, AtomicU64>,
    pool_occupancy: Gauge<f64, AtomicU64>,
}

impl Metrics {
    /// Registers every metric; `pool_capacity` is the instances the pool holds (0 when
    /// instances are allocated on demand).
    pub fn new(pool_capacity: u32) -> Self {
        let mut registry = Registry::with_prefix("envhost");
        let metrics = Self {
            live: Gauge::default(),
            created: Counter::default(),
            evicted: Counter::default(),
            dropped: Counter::default(),
            refused: Counter::default(),
            images: Family::default(),
            calls: Family::default(),
            faults: Family::default(),
            restores: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            call_series: Default::default(),
            latency_series: Default::default(),
            pool_capacity: Gauge::default(),
            pool_occupancy: Gauge::default(),
            registry: Registry::default(),
        };
        metrics.pool_capacity.set(f64::from(pool_capacity));
        for kind in [FaultKind::Trap, FaultKind::Deadline, FaultKind::OutOfMemory] {
            // Every kind shows from the start, at 0, so that rates and alerts have a series.
            drop(metrics.faults.get_or_create(&FaultLabel { kind }));
        }
        for from in [RestoreSource::Replay, RestoreSource::Image] {
            drop(metrics.restores.get_or_create(&RestoreLabel { from }));
        }
        for outcome in [
            ImageOutcome::Made,
            ImageOutcome::Unsupported,
            ImageOutcome::Failed,
        ] {
            drop(metrics.images.get_or_create(&ImageLabel { outcome }));
        }
        registry.register("episodes_live", "Episodes alive", metrics.live.clone());
        registry.register(
            "episodes_created",
            "Episodes created",
            metrics.created.clone(),
        );
        registry.register(
            "episodes_evicted",
            "Episodes evicted after their idle timeout",
            metrics.evicted.clone(),
        );
        registry.register(
            "episodes_dropped",
            "Episodes dropped on request",
            metrics.dropped.clone(),
        );
        registry.register(
            "episodes_refused",
            "Episode creations refused at the episode cap",
            metrics.refused.clone(),
        );
        registry.register(
            "calls",
            "Calls into episodes, by kind and outcome",
            metrics.calls.clone(),
        );
        registry.register(
            "guest_faults",
            "Guest faults, by kind",
            metrics.faults.clone(),
        );
        registry.register(
            "restores",
            "Episodes restored from snapshots (forks included), by where their state came from",
            metrics.restores.clone(),
        );
        registry.register(
            "snapshot_images",
            "Attempts to make a snapshot's pre-initialised image, by outcome",
            metrics.images.clone(),
        );
        registry.register_with_unit(
            "call_latency",
            "Call latency, queueing included",
            prometheus_client::registry::Unit::Seconds,
            metrics.latency.clone(),
        );
        registry.register(
            "pool_capacity_instances",
            "Instances the pooling allocator holds (0: on demand)",
            metrics.pool_capacity.clone(),
        );
        registry.register(
            "pool_occupancy_ratio",
            "Live episodes over the pool's capacity",
            metrics.pool_occupancy.clone(),
        );
        Self {
            registry,
            ..metrics
        }
    }

    /// Counts an attempt to make a snapshot's image that ended with `outcome`.
    pub(super) fn image(&self, outcome: ImageOutcome) {
        self.images.get_or_create(&ImageLabel { outcome }).inc();
    }

    /// Counts an episode restored `from` a replay or an image.
    pub(super) fn restored(&self, from: RestoreSource) {
        self.restores.get_or_create(&RestoreLabel { from }).inc();
    }

    /// Records a call of `kind` that ended with `outcome` after `latency`.
    pub fn observe<T>(&self, kind: CallKind, outcome: &Result<T, CallError>, latency: Duration) {
        let outcome = match outcome {
            Ok(_) => Outcome::Ok,
            Err(CallError::Guest(_)) => Outcome::Error,
            Err(CallError::Fault(fault)) => {
                let fault = match fault {
                    Fault::Trap(_) => Some(FaultKind::Trap),
                    Fault::Deadline(_) => Some(FaultKind::Deadline),
                    Fault::OutOfMemory(_) => Some(FaultKind::OutOfMemory),
                    Fault::Cancelled => None,
                };
                match fault {
                    Some(kind) => {
                        self.faults.get_or_create(&FaultLabel { kind }).inc();
                        Outcome::Fault
                    }
                    None => Outcome::Cancelled,
                }
            }
            Err(CallError::Busy { .. }) => Outcome::Busy,
            Err(CallError::Timeout(_)) => Outcome::Timeout,
            Err(CallError::Instantiate(_) | CallError::Replay(_) | CallError::Stopped) => {
                Outcome::Unavailable
            }
        };
        self.call_series[kind as usize][outcome as usize]
            .get_or_init(|| {
                self.calls
                    .get_or_create(&CallLabels { kind, outcome })
                    .clone()
            })
            .inc();
        self.latency_series[kind as usize]
            .get_or_init(|| self.latency.get_or_create(&KindLabel { kind }).clone())
            .observe(latency.as_secs_f64());
    }

    /// Sets the live-episode gauge and the pool occupancy from `live`.
    pub(super) fn set_live(&self, live: usize) {
        let live = i64::try_from(live).unwrap_or(i64::MAX);
        self.live.set(live);
        let capacity = self.pool_capacity.get();
        if capacity > 0.0 {
            self.pool_occupancy.set(live as f64 / capacity);
        }
    }

    /// The metrics in the Prometheus text format (0.0.4).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_faults_are_counted_by_kind() {
        let metrics = Metrics::new(10);
        metrics.observe::<()>(CallKind::Tool, &Ok(()), Duration::from_micros(100));
        let trap: Result<(), CallError> = Err(CallError::Fault(Fault::Trap("x".into())));
        metrics.observe(CallKind::Tool, &trap, Duration::from_micros(100));
        metrics.set_live(5);
        let text = metrics.encode();
        assert!(
            text.contains(r#"envhost_calls_total{kind="tool",outcome="ok"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"envhost_guest_faults_total{kind="trap"} 1"#),
            "{text}"
        );
        assert!(text.contains("envhost_episodes_live 5"), "{text}");
        assert!(text.contains("envhost_pool_occupancy_ratio 0.5"), "{text}");
        assert!(
            text.contains("envhost_call_latency_seconds_bucket"),
            "{text}"
        );
    }
}
