//! A compiled environment: its component's `InstancePre` and its resolved description.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use tokio::sync::OnceCell;
use wasmtime::component::{Instance, InstancePre, Linker};
use wasmtime::{Engine, Store};

use envhost_protocol::description::Description;

use crate::bindings::{Environment as World, EnvironmentIndices as WorldIndices};
use crate::capability::wasi::{Seed, Sources};
use crate::convert;
use crate::engine::Runtime;
use crate::error::LoadError;
use crate::limits::Limits;
use crate::store::StoreData;
use crate::world;

/// An environment compiled once; every episode of it is instantiated from here.
pub struct Environment {
    engine: Engine,
    linker: Arc<Linker<StoreData>>,
    running: Arc<AtomicUsize>,
    ready: Ready,
    description: Description,
    limits: Limits,
    digest: String,
    /// Where the component's bytes are, which pre-initialised images are made from.
    source: Source,
    /// The component instrumented for pre-initialisation, compiled on the first image made.
    instrumented: OnceCell<Ready>,
}

/// Where an environment's component bytes are: a loaded file is read again when an image is
/// made (so a served component's bytes are not kept in memory); bytes given in memory are kept.
enum Source {
    File(std::path::PathBuf),
    Bytes(Arc<[u8]>),
}

/// A compiled component linked to the host's imports, ready to instantiate: its `InstancePre`
/// and where its `env` exports are.
pub(crate) struct Ready {
    pre: InstancePre<StoreData>,
    indices: WorldIndices,
}

/// A store and the instance in it.
pub(crate) struct Live {
    pub(crate) store: Store<StoreData>,
    pub(crate) world: World,
    pub(crate) instance: Instance,
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
        let mut environment = Self::from_bytes(runtime, bytes, name, limits).await?;
        environment.source = Source::File(path.to_owned());
        Ok(environment)
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
        let bytes: Arc<[u8]> = bytes.into();
        let ready = Ready::compile(&runtime.engine, &runtime.linker, bytes.clone()).await?;
        let sources = Sources::new(Seed::fresh());
        sources.tape.go_live();
        let mut live = instantiate(&runtime.engine, &ready, &limits, "describe", &sources)
            .await
            .map_err(|e| LoadError::Start(format!("{e:#}")))?;
        let info = live
            .world
            .agentenv_environment_env()
            .call_describe(&mut live.store)
            .await
            .map_err(|e| {
                let e = with_stderr(e, live.store.data());
                LoadError::Start(format!("describe: {e:#}"))
            })?;
        let described = convert::description(info)?;
        let name = name.unwrap_or_else(|| described.name.clone());
        Ok(Self {
            engine: runtime.engine.clone(),
            linker: runtime.linker.clone(),
            running: runtime.running.clone(),
            ready,
            description: described.resolve(name)?,
            limits,
            digest,
            source: Source::Bytes(bytes),
            instrumented: OnceCell::new(),
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

    /// A fresh store and instance, labelled `label` in the log, whose WASI random and clocks
    /// come from `sources`.
    pub(crate) async fn instantiate(
        &self,
        label: &str,
        sources: &Sources,
    ) -> wasmtime::Result<Live> {
        self.instantiate_from(&self.ready, label, sources).await
    }

    /// [`Environment::instantiate`] from `ready`, a component derived from this one (an
    /// instrumented copy, or a pre-initialised image), under this environment's limits.
    pub(crate) async fn instantiate_from(
        &self,
        ready: &Ready,
        label: &str,
        sources: &Sources,
    ) -> wasmtime::Result<Live> {
        instantiate(&self.engine, ready, &self.limits, label, sources).await
    }

    /// The component, compiled and linked.
    pub(crate) fn ready(&self) -> &Ready {
        &self.ready
    }

    /// The component's bytes: kept, or read again from its file and checked against its
    /// digest.
    ///
    /// # Errors
    /// The file cannot be read, or no longer holds the component.
    pub(crate) fn bytes(&self) -> Result<Arc<[u8]>, String> {
        match &self.source {
            Source::Bytes(bytes) => Ok(bytes.clone()),
            Source::File(path) => {
                let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
                if component_digest(&bytes) != self.digest {
                    return Err(format!(
                        "{} no longer holds the component served ({})",
                        path.display(),
                        self.digest
                    ));
                }
                Ok(bytes.into())
            }
        }
    }

    /// Compiles `bytes`, a component derived from this one, and links it.
    ///
    /// # Errors
    /// The compiler's or the linker's message.
    pub(crate) async fn compile(&self, bytes: Vec<u8>) -> Result<Ready, String> {
        Ready::compile(&self.engine, &self.linker, bytes.into())
            .await
            .map_err(|e| e.to_string())
    }

    /// The instrumented copy of the component, compiled from `instrumented` the first time.
    ///
    /// # Errors
    /// The compiler's or the linker's message.
    pub(crate) async fn instrumented(&self, instrumented: Vec<u8>) -> Result<&Ready, String> {
        self.instrumented
            .get_or_try_init(|| self.compile(instrumented))
            .await
    }
}

impl Ready {
    /// Compiles the component `bytes` on a blocking thread (seconds for a large component,
    /// milliseconds from the compiled-artefact cache) and links it with `linker`.
    async fn compile(
        engine: &Engine,
        linker: &Linker<StoreData>,
        bytes: Arc<[u8]>,
    ) -> Result<Self, LoadError> {
        let component = world::compile(engine, bytes, world::World::Environment).await?;
        let link = |e: wasmtime::Error| LoadError::Link(format!("{e:#}"));
        let pre = linker.instantiate_pre(&component).map_err(link)?;
        let indices = WorldIndices::new(&pre).map_err(link)?;
        Ok(Self { pre, indices })
    }
}

/// `error`, a guest's failure, with the last line the guest wrote to stderr when it wrote one.
fn with_stderr(error: wasmtime::Error, data: &StoreData) -> wasmtime::Error {
    match data.wasi.stderr().last_line() {
        Some(line) => error.context(format!("after writing to stderr: {line}")),
        None => error,
    }
}

/// A fresh store and instance of `ready`. Instantiation runs under the CPU deadline too; each
/// epoch tick of guest execution yields to the async runtime, and the tick that exhausts the
/// deadline interrupts the guest.
async fn instantiate(
    engine: &Engine,
    ready: &Ready,
    limits: &Limits,
    label: &str,
    sources: &Sources,
) -> wasmtime::Result<Live> {
    let mut store = StoreData::new(label.into(), limits, sources).into_store(engine, limits, true);
    let instance = match ready.pre.instantiate_async(&mut store).await {
        Ok(instance) => instance,
        Err(e) => return Err(with_stderr(e, store.data())),
    };
    let world = ready.indices.load(&mut store, &instance)?;
    Ok(Live {
        store,
        world,
        instance,
    })
}

/// `sha256:` and the hex SHA-256 of `bytes`.
fn component_digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}
