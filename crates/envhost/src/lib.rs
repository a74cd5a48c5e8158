//! envhost: serve agent environments, written as WebAssembly components, over the agentenv
//! protocol and MCP, or call them in-process.
//!
//! - The embedding API, at the crate's root: a [`Host`] loads environments once and creates
//!   isolated [`Episode`]s of them in microseconds, many in one process; an episode answers the
//!   protocol's operations (`reset`, `add_data`, `get_data`, `call_tool`, `call_extension`,
//!   tool access, snapshots) with the same semantics and errors as over HTTP, in envhost's own
//!   types ([`protocol::ToolResult`], [`protocol::CodedError`], ...). It loads computer drivers
//!   the same way, whose [`ComputerEpisode`]s answer the `computer/v1` contract in-process.
//! - [`server`]: axum routes over a host's episodes, and MCP's streamable HTTP transport.
//! - [`cli`]: the `envhost` command, which the binary and the Python package's script run.
//! - [`transfers`]: resolving `file://` and `http(s)://` parts for `data/add`.
//! - [`protocol`] (the `envhost-protocol` crate): the wire protocol's shapes and rules, JSON only.
//! - [`runtime`] (the `envhost-runtime` crate): wasmtime, environments, episodes' instances,
//!   journals, snapshots and images, host capabilities.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use envhost::protocol::{Caller, Part};
//! use envhost::{EnvironmentConfig, Host, HostConfig};
//!
//! let host = Host::new(HostConfig::new(vec![EnvironmentConfig::new("slack", "slack.wasm")])).await?;
//! let episode = host.create_episode("slack").await?;
//! episode.reset().await?;
//! let seed = serde_json::json!({"channels": [{"name": "general", "topic": "chat"}]});
//! let data = seed.as_object().cloned().unwrap_or_default().into();
//! episode.add_data(vec![Part::Data { data, metadata: None }]).await?;
//! let args = serde_json::json!({"channel": "general", "text": "hi"});
//! let result = episode
//!     .call_tool("slack_send_message", args.as_object().cloned().unwrap_or_default(), Caller::default())
//!     .await;
//! assert!(!result.is_error);
//! println!("{:?}", result.structured());
//! host.drop_episode(episode.id());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod agent;
pub mod cli;
pub mod computer;
mod embedding;
mod ids;
pub mod server;
pub mod transfers;

pub use embedding::{
    AgentConfig, CallKind, Catalog, CatalogError, ComputerConfig, ComputerEpisode, ComputerError,
    ComputerGrants, ComputerLoadError, CreateError, DEFAULT_SNAPSHOT_IMAGES, DataError,
    DriverCatalog, EnvironmentConfig, Episode, Host, HostConfig, HostError, InvokeError,
    KeptComputer, MAX_SNAPSHOTS, Metrics, Route, SeedError, ServedTool, SnapshotError, TurnOptions,
};
pub use envhost_protocol as protocol;
pub use envhost_runtime as runtime;
pub use envhost_runtime::{Limits, Snapshot};
