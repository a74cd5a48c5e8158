//! A driver compiled once: its `InstancePre`, the groups it exports, its checked features.

use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::{Component, InstancePre, Linker};

use super::bindings::agentenv::computer::types::FeatureSet;
use super::bindings::exports::agentenv::computer::{display_modes, keyboard, operations, pointer};
use super::features;
use super::instance::{DriverInstance, ForkPoint};
use crate::capability::wasi::{Seed, Sources};
use crate::capability::x11::X11;
use crate::engine::Runtime;
use crate::limits::Limits;
use crate::store::StoreData;
use crate::world::{self, CompileError, World};

/// The `x11` capability's import name: a driver that imports it needs the operator's display
/// grant.
const X11_IMPORT: &str = "agentenv:computer/x11@0.1.0";

/// Why a driver component cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum DriverLoadError {
    /// The bytes are not a component, or it does not export `agentenv:computer/operations`.
    #[error("{0}")]
    Compile(#[from] CompileError),
    /// The component imports what no driver is given, or wasmtime refused the driver linker.
    #[error("the driver cannot be linked: {0}")]
    Link(String),
    /// The component imports a capability the operator did not grant.
    #[error(
        "the driver imports {import}, which needs an X display granted to it: serve it with \
         `--display :N`"
    )]
    NotGranted {
        /// The import.
        import: String,
    },
    /// Instantiating the component, or asking its name and features, failed.
    #[error("the driver failed to start: {0}")]
    Start(String),
    /// The declared features break the contract.
    #[error("the driver's features break the computer contract: {}", .0.join("; "))]
    Features(Vec<String>),
}

/// Why a driver instance could not be forked.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// The driver is granted a display: its state is the X server's, which a fork cannot copy.
    #[error(
        "the driver is granted the display {0}: its state lives in that X server, so it cannot be forked"
    )]
    Display(String),
    /// The new instance could not be made.
    #[error("starting the fork's instance: {0}")]
    Instance(String),
    /// An input of the journal faulted in the new instance.
    #[error("replaying the journal into the fork: {0}")]
    Replay(String),
}

/// What the operator grants a driver (computer.md#x11): nothing by default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// The X display its `x11` capability connects to, e.g. `:99`.
    pub display: Option<String>,
}

/// The optional groups of the contract a driver has: each one an interface it exports
/// (computer.md#features).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    /// `agentenv:computer/pointer`: the pointer tools, clicks and scrolls at the pointer.
    pub pointer: bool,
    /// `agentenv:computer/keyboard`: held keys, `computer-keyboard/v1`.
    pub keyboard: bool,
    /// `agentenv:computer/display-modes`: `computer-display/v1`'s `set`.
    pub display_modes: bool,
}

/// Where each exported interface of a driver is.
pub(crate) struct Indices {
    pub(crate) operations: operations::GuestIndices,
    pub(crate) pointer: Option<pointer::GuestIndices>,
    pub(crate) keyboard: Option<keyboard::GuestIndices>,
    pub(crate) display_modes: Option<display_modes::GuestIndices>,
}

/// A driver compiled once; every episode of it is instantiated from here.
pub struct Driver {
    ready: Ready,
    name: String,
    features: FeatureSet,
    groups: Groups,
    has_state: bool,
}

/// A compiled driver linked to the host's imports, and the limits of its instances.
struct Ready {
    engine: Engine,
    pre: InstancePre<StoreData>,
    indices: Arc<Indices>,
    limits: Limits,
    /// The display its instances' `x11` capability connects to, when it imports it.
    display: Option<String>,
}

impl Ready {
    /// A fresh store and instance, labelled `label` in the log, under the CPU deadline of
    /// each call.
    async fn instantiate(&self, label: &str, seed: Seed) -> wasmtime::Result<DriverInstance> {
        let sources = Sources::new(seed);
        sources.tape.go_live();
        let mut data = StoreData::new(label.into(), &self.limits, &sources);
        if let Some(display) = &self.display {
            data.x11 = X11::new(display.clone());
        }
        let store = data.into_store(&self.engine, &self.limits, false);
        DriverInstance::start(store, &self.pre, &self.indices, self.limits, seed).await
    }
}

impl Driver {
    /// Compiles the component `bytes` (on a blocking thread), checks what it imports against
    /// `grants` (a driver importing `x11` needs a display), finds the groups it exports, and
    /// asks it its name and features, which must pass the contract's checks.
    ///
    /// # Errors
    /// [`DriverLoadError`], naming what is wrong.
    pub async fn from_bytes(
        runtime: &Runtime,
        bytes: Vec<u8>,
        limits: Limits,
        grants: &Grants,
    ) -> Result<Self, DriverLoadError> {
        let component = world::compile(&runtime.engine, bytes, World::Driver).await?;
        let uses_x11 = imports_x11(&runtime.engine, &component);
        let display = match (uses_x11, &grants.display) {
            (false, _) => None,
            (true, Some(display)) => Some(display.clone()),
            (true, None) => {
                return Err(DriverLoadError::NotGranted {
                    import: X11_IMPORT.to_owned(),
                });
            }
        };
        let pre = if display.is_some() {
            let linker = crate::linker::driver(&runtime.engine, true)
                .map_err(|e| DriverLoadError::Link(format!("{e:#}")))?;
            link(&linker, &component)?
        } else {
            link(&runtime.driver_linker, &component)?
        };
        let indices = Arc::new(Indices {
            operations: operations::GuestIndices::new(&pre)
                .map_err(|e| DriverLoadError::Link(format!("{e:#}")))?,
            pointer: pointer::GuestIndices::new(&pre).ok(),
            keyboard: keyboard::GuestIndices::new(&pre).ok(),
            display_modes: display_modes::GuestIndices::new(&pre).ok(),
        });
        let groups = Groups {
            pointer: indices.pointer.is_some(),
            keyboard: indices.keyboard.is_some(),
            display_modes: indices.display_modes.is_some(),
        };
        let ready = Ready {
            engine: runtime.engine.clone(),
            pre,
            indices,
            limits,
            display,
        };
        let mut instance = ready
            .instantiate("describe", Seed::fresh())
            .await
            .map_err(|e| DriverLoadError::Start(format!("{e:#}")))?;
        let (name, features) = instance
            .describe()
            .await
            .map_err(|e| DriverLoadError::Start(e.to_string()))?;
        features::check(&features).map_err(DriverLoadError::Features)?;
        let has_state = instance
            .export_state()
            .await
            .map_err(|e| DriverLoadError::Start(e.to_string()))?
            .is_some();
        Ok(Self {
            ready,
            name,
            features,
            groups,
            has_state,
        })
    }

    /// The display its instances' `x11` capability connects to, when it imports it.
    pub fn display(&self) -> Option<&str> {
        self.ready.display.as_deref()
    }

    /// Whether the driver keeps a desktop state of its own, which `data/get` exports and
    /// `data/add` seeds (its `export-state` answered some at load).
    pub fn has_state(&self) -> bool {
        self.has_state
    }

    /// The driver's own name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The features it declared, checked.
    pub fn features(&self) -> &FeatureSet {
        &self.features
    }

    /// The optional groups it exports.
    pub fn groups(&self) -> Groups {
        self.groups
    }

    /// A fresh store and instance, labelled `label` in the log.
    ///
    /// # Errors
    /// wasmtime's, when the instance cannot be made or fails to start.
    pub async fn instantiate(&self, label: &str) -> wasmtime::Result<DriverInstance> {
        self.ready.instantiate(label, Seed::fresh()).await
    }

    /// A new instance in the state `point` describes (taken with
    /// [`DriverInstance::fork_point`]), labelled `label`: a fresh instance with the original's
    /// random seed, into which the original's journal is replayed with the driver's sleeps
    /// skipped (computer.md#forks). Sound for a driver whose state is its own, like a simulated
    /// desktop; a driver granted a display keeps its state in the X server and is refused.
    ///
    /// # Errors
    /// [`ForkError::Display`] for a driver granted a display; [`ForkError::Instance`] when the
    /// instance cannot be made; [`ForkError::Replay`] when an input of the journal faults.
    pub async fn fork(&self, point: ForkPoint, label: &str) -> Result<DriverInstance, ForkError> {
        if let Some(display) = &self.ready.display {
            return Err(ForkError::Display(display.clone()));
        }
        let mut fork = self
            .ready
            .instantiate(label, point.seed)
            .await
            .map_err(|e| ForkError::Instance(format!("{e:#}")))?;
        fork.replay(&point.journal)
            .await
            .map_err(|e| ForkError::Replay(e.to_string()))?;
        Ok(fork)
    }
}

/// Whether `component` imports the `x11` capability.
fn imports_x11(engine: &Engine, component: &Component) -> bool {
    component
        .component_type()
        .imports(engine)
        .any(|(name, _)| name == X11_IMPORT)
}

/// Links `component` with the driver linker.
fn link(
    linker: &Linker<StoreData>,
    component: &Component,
) -> Result<InstancePre<StoreData>, DriverLoadError> {
    linker
        .instantiate_pre(component)
        .map_err(|e| DriverLoadError::Link(format!("{e:#}")))
}
