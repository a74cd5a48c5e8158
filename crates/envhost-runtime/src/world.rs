//! Compiling a component for one of envhost's three worlds: bytes that are not a component, and
//! a component of another world, are refused for what they are before anything is linked, so
//! that the refusal names the world and never the linker's missing imports.

use wasmtime::Engine;
use wasmtime::component::Component;

/// One of the worlds of `wit/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum World {
    /// `agentenv:environment`: exports `agentenv:environment/env`.
    Environment,
    /// `agentenv:computer`'s driver worlds: export `agentenv:computer/operations`.
    Driver,
    /// `agentenv:agent`: exports `agentenv:agent/handler`.
    Agent,
}

impl World {
    /// The package whose interface a component of the world exports.
    fn package(self) -> &'static str {
        match self {
            Self::Environment => "agentenv:environment/",
            Self::Driver => "agentenv:computer/",
            Self::Agent => "agentenv:agent/",
        }
    }

    /// What a component of the world is, with its article: `an environment`, `a computer
    /// driver`, `an agent`.
    pub fn noun(self) -> &'static str {
        match self {
            Self::Environment => "an environment",
            Self::Driver => "a computer driver",
            Self::Agent => "an agent",
        }
    }

    /// The world `component` targets, from the interfaces it exports; none when it exports no
    /// interface of any of them.
    pub fn of(engine: &Engine, component: &Component) -> Option<Self> {
        let exports: Vec<String> = component
            .component_type()
            .exports(engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        [Self::Environment, Self::Driver, Self::Agent]
            .into_iter()
            .find(|world| exports.iter().any(|name| name.starts_with(world.package())))
    }
}

/// Why bytes could not be compiled as a component of the world wanted.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The bytes are not WebAssembly at all.
    #[error("not WebAssembly: the file does not start with the bytes \\0asm")]
    NotWasm,
    /// A core WebAssembly module, not a component.
    #[error(
        "a WebAssembly module, not a component: build it for wasm32-wasip2, or make a component \
         of it with `wasm-tools component new`"
    )]
    Module,
    /// A component of another world.
    #[error("{} component, not {}", .found.noun(), .wanted.noun())]
    OtherWorld {
        /// The world it targets.
        found: World,
        /// The world wanted.
        wanted: World,
    },
    /// A component that exports none of the worlds' interfaces.
    #[error(
        "a component that exports none of envhost's worlds (agentenv:environment/env, \
         agentenv:computer/operations, agentenv:agent/handler)"
    )]
    NoWorld,
    /// wasmtime refused the component.
    #[error("wasmtime cannot compile it: {0}")]
    Invalid(String),
}

/// The WebAssembly preamble, and the version and layer fields of a core module.
const MAGIC: &[u8; 4] = b"\0asm";
const CORE_MODULE: [u8; 4] = [1, 0, 0, 0];

/// Compiles `bytes` on a blocking thread (seconds for a large component, milliseconds from the
/// compiled-artefact cache) and checks that it targets `wanted`.
///
/// # Errors
/// [`CompileError`], naming what the bytes are instead.
pub async fn compile(
    engine: &Engine,
    bytes: impl AsRef<[u8]> + Send + 'static,
    wanted: World,
) -> Result<Component, CompileError> {
    let preamble = bytes.as_ref().get(..8).unwrap_or_default();
    if !preamble.starts_with(MAGIC) {
        return Err(CompileError::NotWasm);
    }
    if preamble[4..] == CORE_MODULE {
        return Err(CompileError::Module);
    }
    let engine = engine.clone();
    let (component, found) = tokio::task::spawn_blocking(move || {
        let component = Component::new(&engine, bytes.as_ref())?;
        let found = World::of(&engine, &component);
        Ok::<_, wasmtime::Error>((component, found))
    })
    .await
    .map_err(|e| CompileError::Invalid(e.to_string()))?
    .map_err(|e| CompileError::Invalid(format!("{e:#}")))?;
    match found {
        Some(world) if world == wanted => Ok(component),
        Some(found) => Err(CompileError::OtherWorld { found, wanted }),
        None => Err(CompileError::NoWorld),
    }
}
