//! wasmtime: the engine, compiled environments, their episodes, and the host imports.
//!
//! An [`Environment`] is a component compiled once, with its `InstancePre` and its cached,
//! resolved description. An [`Episode`] is one store and one instance of it; calls into an
//! episode are serialised, episodes run concurrently. A guest that traps, exceeds its CPU
//! deadline or exhausts its memory fails the call it was serving ([`CallError::Fault`]); the
//! episode then starts again on a fresh instance.

mod convert;
mod engine;
mod environment;
mod episode;
mod error;
mod state;

/// Host-side bindings of the `environment-world` world (`wit/environment`).
pub mod bindings {
    wasmtime::component::bindgen!({
        world: "environment-world",
        path: "../wit/environment",
        exports: { default: async },
    });

    pub use exports::agentenv::environment::environment::{ContentBlock, ImageContent, ToolResult};
}

pub use convert::part_to_guest;
pub use engine::{Limits, Runtime};
pub use environment::Environment;
pub use episode::{CallContext, Episode};
pub use error::{CallError, Fault, LoadError};
