//! The embedding API: [`Host`] loads environments and computer drivers once and creates
//! isolated [`Episode`]s of the environments in microseconds, and [`ComputerEpisode`]s of the
//! drivers, many in one process; each answers its protocol's operations in-process with the
//! same semantics and errors as over HTTP (the server is a thin layer over this module).
//!
//! An episode's calls run one at a time, each on its caller's own task while its guest answers
//! within an epoch tick (no hand-off to another task or thread); a call whose guest computes
//! longer moves to a task of its own, so dropping the caller's future never stops a guest
//! mid-call. Call from any task, or from `Runtime::block_on`. Idle episodes are evicted only
//! when [`Host::evict_idle`] runs (the HTTP server runs it every second).

mod agents;
mod catalog;
mod computer_episode;
mod computers;
mod config;
mod driver_catalog;
mod episode;
mod host;
mod mcp_results;
mod metrics;
mod registry;
mod snapshot_store;
mod snapshots;

pub use agents::{InvokeError, TurnOptions};
pub use catalog::{Catalog, CatalogError, Route, ServedTool};
pub use computer_episode::ComputerEpisode;
pub use computers::{ComputerError, KeptComputer};
pub use config::{
    AgentConfig, ComputerConfig, ComputerGrants, DEFAULT_SNAPSHOT_IMAGES, EnvironmentConfig,
    HostConfig,
};
pub use driver_catalog::{ComputerLoadError, DriverCatalog};
pub use episode::{DataError, Episode};
pub use host::{CreateError, Host, HostError, SeedError};
pub use mcp_results::METHODS as MCP_METHODS;
pub use metrics::{CallKind, Metrics};
pub use snapshot_store::MAX_SNAPSHOTS;
pub use snapshots::SnapshotError;
