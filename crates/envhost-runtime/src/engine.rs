//! The process-wide wasmtime engine, its linker, its instance allocator, and the epoch ticker
//! behind CPU deadlines.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::error::LoadError;
use crate::limits::{BETWEEN_CALLS_TICK, EPOCH_TICK, IDLE_AFTER, IDLE_TICK, Limits};
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

/// Address space a pooled memory slot reserves when the whole pool fits: 4 GiB, with
/// [`UNCHECKED_GUARD_BYTES`] of guard, lets compiled code drop the bounds check on every load
/// and store of a 32-bit memory.
const UNCHECKED_RESERVATION_BYTES: u64 = 4 << 30;
/// The guard after an unchecked slot, wasmtime's default on 64-bit hosts.
const UNCHECKED_GUARD_BYTES: u64 = 32 << 20;
/// The guard after a compact slot.
const COMPACT_GUARD_BYTES: u64 = 64 << 10;

/// Where instances come from, in the order [`Runtime::with_config`] tries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Allocation {
    /// The pool, each memory slot reserving [`UNCHECKED_RESERVATION_BYTES`] of address space
    /// (about 4 TiB for 1,000 instances): no bounds checks in compiled code.
    PooledUnchecked,
    /// The pool, each memory slot reserving only the largest memory: a sixteenth of the
    /// address space at the default 256 MiB, with bounds checks in compiled code.
    PooledCompact,
    /// On demand, wasmtime's defaults (no bounds checks either).
    OnDemand,
}

fn engine(config: &RuntimeConfig, allocation: Allocation) -> wasmtime::Result<Engine> {
    let mut wasm = Config::new();
    wasm.epoch_interruption(true);
    wasm.wasm_component_model(true);
    wasm.cache(Some(wasmtime::Cache::new(wasmtime::CacheConfig::new())?));
    let largest = u64::try_from(config.max_memory_bytes).unwrap_or(u64::MAX);
    let (instances, reservation, guard) = match (allocation, config.pooled_instances) {
        (Allocation::OnDemand, _) | (_, None) => return Engine::new(&wasm),
        (Allocation::PooledUnchecked, Some(instances)) => (
            instances,
            largest.max(UNCHECKED_RESERVATION_BYTES),
            UNCHECKED_GUARD_BYTES,
        ),
        (Allocation::PooledCompact, Some(instances)) => (instances, largest, COMPACT_GUARD_BYTES),
    };
    wasm.memory_reservation(reservation)
        .memory_guard_size(guard)
        .memory_reservation_for_growth(0)
        .memory_may_move(false);
    wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool(
        instances,
        config.max_memory_bytes,
    )));
    Engine::new(&wasm)
}

/// The first engine `config` can have: pooled with unchecked slots, then with compact ones
/// (each refusal logged as a warning), then on demand.
fn first_engine(config: &RuntimeConfig) -> Result<(Engine, Allocation), LoadError> {
    if config.pooled_instances.is_some() {
        for allocation in [Allocation::PooledUnchecked, Allocation::PooledCompact] {
            match engine(config, allocation) {
                Ok(engine) => return Ok((engine, allocation)),
                Err(e) => tracing::warn!(
                    error = %format!("{e:#}"),
                    ?allocation,
                    "cannot reserve the instance pool's address space; trying a smaller layout"
                ),
            }
        }
    }
    let engine = engine(config, Allocation::OnDemand).map_err(LoadError::engine)?;
    Ok((engine, Allocation::OnDemand))
}

/// The engine every environment of the process is compiled with, and the linker that gives
/// guests their imports ([`crate::linker`]).
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<StoreData>>,
    /// The linker of drivers.
    pub(crate) driver_linker: Arc<Linker<StoreData>>,
    /// The linker of agents.
    pub(crate) agent_linker: Arc<Linker<StoreData>>,
    /// Calls running in guests right now, across every environment of the engine.
    pub(crate) running: Arc<AtomicUsize>,
    allocation: Allocation,
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
    /// its epoch ticker thread, which stops when the engine is dropped. A pool reserves 4 GiB
    /// of address space per memory slot, so compiled code needs no bounds checks; when that
    /// cannot be reserved, only the largest memory per slot (with bounds checks), and when
    /// neither can, instances are allocated on demand; each fallback is logged as a warning.
    ///
    /// # Errors
    /// [`LoadError::Engine`] when wasmtime refuses the configuration.
    pub fn with_config(config: &RuntimeConfig) -> Result<Self, LoadError> {
        let (engine, allocation) = first_engine(config)?;
        let linker = crate::linker::environment(&engine).map_err(LoadError::engine)?;
        let driver_linker = crate::linker::driver(&engine, false).map_err(LoadError::engine)?;
        let agent_linker = crate::linker::agent(&engine).map_err(LoadError::engine)?;
        let running = Arc::new(AtomicUsize::new(0));
        start_ticker(&engine, running.clone()).map_err(LoadError::engine)?;
        Ok(Self {
            engine,
            linker: Arc::new(linker),
            driver_linker: Arc::new(driver_linker),
            agent_linker: Arc::new(agent_linker),
            running,
            allocation,
        })
    }

    /// Whether instances come from the pool.
    pub fn is_pooled(&self) -> bool {
        self.allocation != Allocation::OnDemand
    }
}

/// Advances `engine`'s epoch every [`EPOCH_TICK`] while guests run (`running` above zero),
/// every [`BETWEEN_CALLS_TICK`] while none runs but one ran in the last [`IDLE_AFTER`], every
/// [`IDLE_TICK`] otherwise; stops when the engine is dropped.
fn start_ticker(engine: &Engine, running: Arc<AtomicUsize>) -> std::io::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("envhost-epoch".into())
        .spawn(move || {
            let mut last_busy = Instant::now();
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                let tick = if running.load(Ordering::Relaxed) > 0 {
                    last_busy = Instant::now();
                    EPOCH_TICK
                } else if last_busy.elapsed() > IDLE_AFTER {
                    IDLE_TICK
                } else {
                    BETWEEN_CALLS_TICK
                };
                std::thread::sleep(tick);
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

    #[test]
    fn a_default_sized_pool_needs_no_bounds_checks() {
        let config = RuntimeConfig {
            pooled_instances: Some(1_000),
            ..RuntimeConfig::default()
        };
        let runtime = Runtime::with_config(&config).unwrap();
        assert_eq!(runtime.allocation, Allocation::PooledUnchecked);
    }
}
