//! envhost: serve agent environments, written as WebAssembly components, over the agentenv
//! protocol and MCP.
//!
//! - [`protocol`]: the wire protocol's shapes and rules (JSON only).
//! - [`runtime`]: wasmtime: the engine and its instance pool, compiled environments, their
//!   episodes' instances.
//! - [`host`]: the embedding API, [`Host`] and [`Episode`]: environments by name, episodes
//!   created, called and dropped in-process with the protocol's semantics.
//! - [`server`]: axum routes and the MCP endpoint over a host's episodes.
//! - [`transfers`]: resolving `file://` and `http(s)://` parts for `data/add`.

#![warn(missing_docs)]

pub mod host;
pub mod protocol;
pub mod runtime;
pub mod server;
pub mod transfers;

pub use host::{Episode, Host};
