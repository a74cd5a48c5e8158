//! envhost: serve agent environments, written as WebAssembly components, over the agentenv
//! protocol and MCP.
//!
//! - [`protocol`]: the wire protocol's shapes and rules (JSON only).
//! - `runtime`: wasmtime: compiled environments and their episodes.
//! - `server`: axum routes and the MCP endpoint (rmcp) over one episode.
//! - `transfers`: resolving `file://` and `http(s)://` parts for `data/add`.

#![warn(missing_docs)]

pub mod protocol;
pub mod runtime;
pub mod server;
pub mod transfers;
