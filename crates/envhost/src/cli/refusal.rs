//! Start-up refusals that say what to do: a component given where another world is served names
//! the option that serves it (docs/serve.md#start-up-refusals).

use std::path::Path;

use crate::runtime::LoadError;
use crate::runtime::agent::AgentLoadError;
use crate::runtime::driver::DriverLoadError;
use crate::runtime::world::{CompileError, World};
use crate::{ComputerLoadError, HostError};

/// How a component of `world` at `path`, given with option `given` (`--driver`, `--agent`;
/// empty for an environment's place), is served.
pub fn serve_hint(world: World, path: &Path, given: &str) -> String {
    let path = path.display();
    match world {
        World::Environment => {
            format!("serve it as an environment, not with {given}: `envhost serve {path}`")
        }
        World::Driver => format!("serve it with `envhost serve --driver {path}`"),
        World::Agent => {
            format!(
                "serve it beside an environment with `envhost serve ENV.wasm --agent NAME={path}`"
            )
        }
    }
}

/// The world `error` found instead of the one wanted, when that is why it failed.
fn other_world(error: &CompileError) -> Option<World> {
    match error {
        CompileError::OtherWorld { found, .. } => Some(*found),
        _ => None,
    }
}

/// `error` as the command reports it, with how to serve a component of another world.
pub fn host(error: HostError) -> anyhow::Error {
    if let HostError::Computer { component, why, .. } = &error {
        return match why {
            ComputerLoadError::Read(e) => anyhow::anyhow!("reading {}: {e}", component.display()),
            ComputerLoadError::Driver(e) => driver(e, component),
            other => anyhow::anyhow!("{other}"),
        };
    }
    let found = match &error {
        HostError::Load {
            component,
            why: LoadError::Compile(compile),
            ..
        } => other_world(compile).map(|world| (world, component, "")),
        HostError::AgentLoad {
            component,
            why: AgentLoadError::NotAnAgent(compile),
            ..
        } => other_world(compile).map(|world| (world, component, "--agent")),
        _ => None,
    };
    match found {
        Some((world, component, given)) => {
            anyhow::anyhow!("{error}: {}", serve_hint(world, component, given))
        }
        None => error.into(),
    }
}

/// A driver's load error as the command reports it, naming the file, with how to serve a
/// component of another world.
pub fn driver(error: &DriverLoadError, path: &Path) -> anyhow::Error {
    let hint = match error {
        DriverLoadError::Compile(compile) => {
            other_world(compile).map(|w| serve_hint(w, path, "--driver"))
        }
        _ => None,
    };
    match hint {
        Some(hint) => anyhow::anyhow!("driver {}: {error}: {hint}", path.display()),
        None => anyhow::anyhow!("driver {}: {error}", path.display()),
    }
}
