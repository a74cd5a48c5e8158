//! The process-wide wasmtime engine, its linker, its instance allocator, and the epoch ticker
//! behind CPU deadlines.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::error::LoadError;
use crate::limits::{EPOCH_TICK, IDLE_AFTER, IDLE_TICK, Limits};
use crate::store::StoreData;

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
/// fault, the instrumented instances snapshot images are made from.
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
/// guests their imports ([`crate::linker`]).
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<StoreData>>,
    /// Calls running in guests right now, across every environment of the engine.
    pub(crate) running: Arc<AtomicUsize>,
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
        let linker = crate::linker::environment(&engine).map_err(LoadError::engine)?;
        let running = Arc::new(AtomicUsize::new(0));
        start_ticker(&engine, running.clone()).map_err(LoadError::engine)?;
        Ok(Self {
            engine,
            linker: Arc::new(linker),
            running,
            pooled,
        })
    }

    /// Whether instances come from the pool.
    pub fn is_pooled(&self) -> bool {
        self.pooled
    }
}

/// Advances `engine`'s epoch every [`EPOCH_TICK`] while guests run (`running` above zero in the
/// last [`IDLE_AFTER`]), every [`IDLE_TICK`] otherwise; stops when the engine is dropped.
fn start_ticker(engine: &Engine, running: Arc<AtomicUsize>) -> std::io::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("envhost-epoch".into())
        .spawn(move || {
            let mut last_busy = Instant::now();
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                if running.load(Ordering::Relaxed) > 0 {
                    last_busy = Instant::now();
                }
                let idle = last_busy.elapsed() > IDLE_AFTER;
                std::thread::sleep(if idle { IDLE_TICK } else { EPOCH_TICK });
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

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
