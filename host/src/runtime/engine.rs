//! The process-wide wasmtime engine, its linker, and the epoch ticker behind CPU deadlines.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine};

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
}

impl Default for Limits {
    /// 256 MiB of memory, 10 s of CPU per call.
    fn default() -> Self {
        Self {
            memory_bytes: 256 << 20,
            cpu_deadline: Duration::from_secs(10),
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

/// The engine every environment of the process is compiled with, and the linker that gives
/// guests their imports: `context`, `log`, and WASI with nothing granted.
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<EpisodeState>>,
}

impl Runtime {
    /// Builds the engine (epoch interruption on) and starts its epoch ticker thread, which stops
    /// when the engine is dropped.
    ///
    /// # Errors
    /// [`LoadError::Engine`] when wasmtime refuses the configuration.
    pub fn new() -> Result<Self, LoadError> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.wasm_component_model(true);
        config.cache(Some(
            wasmtime::Cache::new(wasmtime::CacheConfig::new()).map_err(LoadError::engine)?,
        ));
        let engine = Engine::new(&config).map_err(LoadError::engine)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(LoadError::engine)?;
        World::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s).map_err(LoadError::engine)?;
        start_ticker(&engine).map_err(LoadError::engine)?;
        Ok(Self {
            engine,
            linker: Arc::new(linker),
        })
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
            memory_bytes: 0,
            cpu_deadline: Duration::from_millis(ms),
        };
        assert_eq!(limits(0).deadline_ticks(), 1);
        assert_eq!(limits(10).deadline_ticks(), 1);
        assert_eq!(limits(15).deadline_ticks(), 2);
        assert_eq!(limits(500).deadline_ticks(), 50);
    }
}
