//! The process-wide wasmtime engine, its linker, its instance allocator, and the epoch ticker
//! behind CPU deadlines.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::bindings::Environment as World;
use super::error::LoadError;
use super::state::EpisodeState;

/// How often the epoch advances: the granularity of CPU deadlines.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// What one episode may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory per instance, in bytes (all memories together).
    pub memory_bytes: usize,
    /// Guest execution time per call: the call fails with [`super::Fault::Deadline`] once the
    /// guest has run this long. Measured in epoch ticks of [`EPOCH_TICK`], so rounded up to
    /// 10 ms.
    pub cpu_deadline: Duration,
    /// Wall time a caller waits for a call, queueing included: past it the caller gets
    /// [`super::CallError::Timeout`] (the call itself still runs to its end or its deadline).
    pub call_timeout: Duration,
    /// Calls that may wait for the episode at once, besides the one running (at least 1); past
    /// it a call is refused with [`super::CallError::Busy`].
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

impl Limits {
    /// The CPU deadline in epoch ticks (at least one).
    pub(crate) fn deadline_ticks(&self) -> u64 {
        let ticks = self.cpu_deadline.as_nanos().div_ceil(EPOCH_TICK.as_nanos());
        u64::try_from(ticks).unwrap_or(u64::MAX).max(1)
    }
}

/// How the engine allocates instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Instances alive at once, for wasmtime's pooling allocator (memory, tables, stacks and
    /// metadata slots reserved up front, reused without a system call per instance); `None`
    /// allocates on demand.
    pub pooled_instances: Option<u32>,
    /// The largest linear memory of any instance, in bytes: the size of a pool slot.
    pub max_memory_bytes: usize,
}

impl Default for RuntimeConfig {
    /// On-demand allocation, memories up to 256 MiB.
    fn default() -> Self {
        Self {
            pooled_instances: None,
            max_memory_bytes: Limits::default().memory_bytes,
        }
    }
}

/// Instances the pool holds besides the episodes': `describe()` at load, replacements after a
/// fault.
const SPARE_INSTANCES: u32 = 16;

/// The pooling allocator for `instances` instances of components with up to 16 core instances,
/// 8 memories and 8 tables each, and on average 4, 2 and 2 (components from Rust and C
/// toolchains use one memory; larger runtimes use fewer episodes' worth of the pool).
fn pool(instances: u32, max_memory_bytes: usize) -> PoolingAllocationConfig {
    let instances = instances.saturating_add(SPARE_INSTANCES);
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(instances)
        .total_core_instances(instances.saturating_mul(4))
        .max_core_instances_per_component(16)
        .total_memories(instances.saturating_mul(2))
        .max_memories_per_component(8)
        .total_tables(instances.saturating_mul(2))
        .max_tables_per_component(8)
        .total_stacks(instances)
        .max_memory_size(max_memory_bytes);
    pool
}

fn engine(config: &RuntimeConfig, pooled: bool) -> wasmtime::Result<Engine> {
    let mut wasm = Config::new();
    wasm.epoch_interruption(true);
    wasm.wasm_component_model(true);
    wasm.cache(Some(wasmtime::Cache::new(wasmtime::CacheConfig::new())?));
    if let (true, Some(instances)) = (pooled, config.pooled_instances) {
        let slot = u64::try_from(config.max_memory_bytes).unwrap_or(u64::MAX);
        wasm.memory_reservation(slot)
            .memory_guard_size(64 << 10)
            .memory_reservation_for_growth(0)
            .memory_may_move(false);
        wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool(
            instances,
            config.max_memory_bytes,
        )));
    }
    Engine::new(&wasm)
}

/// The engine every environment of the process is compiled with, and the linker that gives
/// guests their imports: `context`, `log`, and WASI with nothing granted.
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<EpisodeState>>,
    pooled: bool,
}

impl Runtime {
    /// An on-demand runtime ([`RuntimeConfig::default`]).
    ///
    /// # Errors
    /// As [`Runtime::with_config`].
    pub fn new() -> Result<Self, LoadError> {
        Self::with_config(&RuntimeConfig::default())
    }

    /// Builds the engine (epoch interruption on, compiled artefacts cached on disk) and starts
    /// its epoch ticker thread, which stops when the engine is dropped. When the pool's address
    /// space cannot be reserved, falls back to on-demand allocation with a warning.
    ///
    /// # Errors
    /// [`LoadError::Engine`] when wasmtime refuses the configuration.
    pub fn with_config(config: &RuntimeConfig) -> Result<Self, LoadError> {
        let mut pooled = config.pooled_instances.is_some();
        let engine = match engine(config, pooled) {
            Ok(engine) => engine,
            Err(e) if pooled => {
                tracing::warn!(
                    error = %format!("{e:#}"),
                    "cannot reserve the instance pool; allocating instances on demand"
                );
                pooled = false;
                engine(config, false).map_err(LoadError::engine)?
            }
            Err(e) => return Err(LoadError::engine(e)),
        };
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(LoadError::engine)?;
        World::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s).map_err(LoadError::engine)?;
        start_ticker(&engine).map_err(LoadError::engine)?;
        Ok(Self {
            engine,
            linker: Arc::new(linker),
            pooled,
        })
    }

    /// Whether instances come from the pool.
    pub fn is_pooled(&self) -> bool {
        self.pooled
    }
}

fn start_ticker(engine: &Engine) -> std::io::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("envhost-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_round_up_to_whole_ticks() {
        let limits = |ms| Limits {
            cpu_deadline: Duration::from_millis(ms),
            ..Limits::default()
        };
        assert_eq!(limits(0).deadline_ticks(), 1);
        assert_eq!(limits(10).deadline_ticks(), 1);
        assert_eq!(limits(15).deadline_ticks(), 2);
        assert_eq!(limits(500).deadline_ticks(), 50);
    }

    #[test]
    fn an_unreservable_pool_falls_back_to_on_demand() {
        let config = RuntimeConfig {
            pooled_instances: Some(u32::MAX - SPARE_INSTANCES),
            max_memory_bytes: 1 << 40,
        };
        let runtime = Runtime::with_config(&config).unwrap();
        assert!(!runtime.is_pooled());
    }
}
