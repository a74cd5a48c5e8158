//! A compiled environment: its component's `InstancePre` and its resolved description.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use wasmtime::component::Component;
use wasmtime::{Engine, Store, UpdateDeadline};

use super::bindings::{Environment as World, EnvironmentPre as WorldPre};
use super::convert;
use super::determinism::{Seed, Tape};
use super::engine::{Limits, Runtime};
use super::error::LoadError;
use super::state::EpisodeState;
use crate::protocol::description::Description;

/// An environment compiled once; every episode of it is instantiated from here.
pub struct Environment {
    engine: Engine,
    running: Arc<AtomicUsize>,
    pre: WorldPre<EpisodeState>,
    description: Description,
    limits: Limits,
    digest: String,
}

/// A store and the instance in it.
pub(crate) struct Live {
    pub(crate) store: Store<EpisodeState>,
    pub(crate) world: World,
}

impl Environment {
    /// Compiles the component at `path`, asks it to `describe()` itself, and resolves the
    /// description under `name` (the card's name; `None` keeps the guest's own).
    ///
    /// # Errors
    /// [`LoadError`]: the file is unreadable, not an `agentenv:environment` component, fails to
    /// start, or describes something that cannot be served.
    pub async fn load(
        runtime: &Runtime,
        path: &Path,
        name: Option<String>,
        limits: Limits,
    ) -> Result<Self, LoadError> {
        let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_bytes(runtime, bytes, name, limits).await
    }

    /// [`Environment::load`] from the component's bytes. Compiling runs on a blocking thread
    /// (seconds for a large component; milliseconds from the compiled-artefact cache).
    ///
    /// # Errors
    /// As [`Environment::load`].
    pub async fn from_bytes(
        runtime: &Runtime,
        bytes: Vec<u8>,
        name: Option<String>,
        limits: Limits,
    ) -> Result<Self, LoadError> {
        let digest = component_digest(&bytes);
        let engine = runtime.engine.clone();
        let component = tokio::task::spawn_blocking(move || Component::new(&engine, &bytes))
            .await
            .map_err(|e| LoadError::Compile(e.to_string()))?
            .map_err(|e| LoadError::Compile(format!("{e:#}")))?;
        let pre = runtime
            .linker
            .instantiate_pre(&component)
            .and_then(WorldPre::new)
            .map_err(|e| LoadError::Compile(format!("{e:#}")))?;
        let tape = Tape::default();
        tape.go_live();
        let mut live = instantiate(
            &runtime.engine,
            &pre,
            &limits,
            "describe",
            Seed::fresh(),
            &tape,
        )
        .await
        .map_err(|e| LoadError::Start(format!("{e:#}")))?;
        let info = live
            .world
            .agentenv_environment_env()
            .call_describe(&mut live.store)
            .await
            .map_err(|e| LoadError::Start(format!("describe: {e:#}")))?;
        let described = convert::description(info)?;
        let name = name.unwrap_or_else(|| described.name.clone());
        Ok(Self {
            engine: runtime.engine.clone(),
            running: runtime.running.clone(),
            pre,
            description: described.resolve(name)?,
            limits,
            digest,
        })
    }

    /// `sha256:` and 64 hex digits: the SHA-256 of the component's bytes, which names it in
    /// snapshots.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The resolved description.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The count of calls running in guests across the engine.
    pub(crate) fn running(&self) -> &Arc<AtomicUsize> {
        &self.running
    }

    /// The limits of each episode.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// A fresh store and instance, labelled `label` in the log, whose WASI random comes from
    /// `seed` and whose clocks go through `tape`.
    pub(crate) async fn instantiate(
        &self,
        label: &str,
        seed: Seed,
        tape: &Tape,
    ) -> wasmtime::Result<Live> {
        instantiate(&self.engine, &self.pre, &self.limits, label, seed, tape).await
    }
}

/// A fresh store and instance of `pre`. Instantiation runs under the CPU deadline too; each
/// epoch tick of guest execution yields to the async runtime, and the tick that exhausts the
/// deadline interrupts the guest.
async fn instantiate(
    engine: &Engine,
    pre: &WorldPre<EpisodeState>,
    limits: &Limits,
    label: &str,
    seed: Seed,
    tape: &Tape,
) -> wasmtime::Result<Live> {
    let mut store = Store::new(engine, EpisodeState::new(label.into(), limits, seed, tape));
    store.limiter(EpisodeState::limiter);
    store.epoch_deadline_callback(|mut ctx| {
        if ctx.data_mut().past_deadline() {
            return Ok(UpdateDeadline::Interrupt);
        }
        super::threads::mark_computing();
        // tokio's yield_now lets the runtime poll its timers and I/O before the guest resumes.
        Ok(UpdateDeadline::YieldCustom(
            1,
            Box::pin(tokio::task::yield_now()),
        ))
    });
    EpisodeState::arm_deadline(&mut store, limits);
    let world = pre.instantiate_async(&mut store).await?;
    Ok(Live { store, world })
}

/// `sha256:` and the hex SHA-256 of `bytes`.
fn component_digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}
