//! What a host loads and serves: its environments, computer drivers and agents, and their
//! settings.

use std::path::PathBuf;
use std::time::Duration;

use envhost_protocol::computer::settings::Settings;
use envhost_runtime::Limits;

use crate::agent::model::ModelEndpoint;
use crate::transfers::TransferConfig;

/// One environment to load.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvironmentConfig {
    /// Its name in the host: episodes are created by it (`POST /episodes {"environment"}`).
    pub name: String,
    /// The component file.
    pub component: PathBuf,
    /// The card's name (and `{environment_name}`); the component's own when `None`.
    pub card_name: Option<String>,
    /// Each episode's limits.
    pub limits: Limits,
    /// How long an episode may go without a call before [`Host::evict_idle`] evicts it; `None`
    /// keeps it. The HTTP server calls `evict_idle` every second; an embedder calls it itself.
    pub idle_timeout: Option<Duration>,
}

impl EnvironmentConfig {
    /// `component` loaded as `name`, with default limits and no idle eviction.
    pub fn new(name: impl Into<String>, component: impl Into<PathBuf>) -> Self {
        Self {
            name: name.into(),
            component: component.into(),
            card_name: None,
            limits: Limits::default(),
            idle_timeout: None,
        }
    }
}

/// One agent to load (docs/agents.md#serving): a component of the `agentenv:agent` world,
/// bound to one of the host's environments.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentConfig {
    /// Its name in the host: turns are started by it ([`Host::invoke`](crate::Host::invoke),
    /// `POST /agents/{name}/invoke`).
    pub name: String,
    /// The component file.
    pub component: PathBuf,
    /// The environment whose episodes its tool calls act on.
    pub environment: String,
    /// The model's name at the endpoint.
    pub model: String,
    /// Each turn's limits (its instance's memory and CPU deadline).
    pub limits: Limits,
}

impl AgentConfig {
    /// `component` loaded as `name`, bound to `environment`, asking the endpoint for the model
    /// `"default"`, with default limits.
    pub fn new(
        name: impl Into<String>,
        component: impl Into<PathBuf>,
        environment: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            component: component.into(),
            environment: environment.into(),
            model: "default".into(),
            limits: Limits::default(),
        }
    }
}

/// What the operator grants a computer driver besides its own code (docs/computer.md#grants):
/// nothing by default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComputerGrants {
    /// The X display its `x11` capability connects to (`:99`), also `DISPLAY` in its commands'
    /// environment; without it a driver that imports `x11` is refused at load.
    pub display: Option<String>,
    /// Whether callers may run commands (`computer-exec/v1`) as this process's user, in the
    /// home (else `$HOME`).
    pub exec: bool,
    /// The session user's home: `data/add` writes file parts under it, `data/get` exports its
    /// data paths, commands run in it.
    pub home: Option<PathBuf>,
}

/// One computer driver to load (docs/computer.md): a component of the `agentenv:computer`
/// package, each of whose episodes is a computer.
#[derive(Clone, Debug, PartialEq)]
pub struct ComputerConfig {
    /// Its name in the host: computers are created by it
    /// ([`Host::create_computer`](crate::Host::create_computer)).
    pub name: String,
    /// The component file.
    pub component: PathBuf,
    /// The card's name (and MCP's server name); the driver's own when `None`.
    pub card_name: Option<String>,
    /// What the operator grants it.
    pub grants: ComputerGrants,
    /// Each new computer's settings (`AGENTENV_COMPUTER_SETTINGS` when served by the command).
    pub settings: Settings,
    /// Each driver instance's limits (memory, CPU deadline of each operation).
    pub limits: Limits,
}

impl ComputerConfig {
    /// `component` loaded as `name`, granted nothing, with default settings and limits.
    pub fn new(name: impl Into<String>, component: impl Into<PathBuf>) -> Self {
        Self {
            name: name.into(),
            component: component.into(),
            card_name: None,
            grants: ComputerGrants::default(),
            settings: Settings::default(),
            limits: Limits::default(),
        }
    }
}

/// What a host serves.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The environments, the first being the default.
    pub environments: Vec<EnvironmentConfig>,
    /// The computer drivers; their computers are episodes under the same cap.
    pub computers: Vec<ComputerConfig>,
    /// The most episodes alive at once, environments' and computers' together; creations
    /// beyond it are refused.
    pub max_episodes: usize,
    /// Whether instances come from wasmtime's pooling allocator sized for `max_episodes`
    /// (falling back to on-demand allocation when the pool cannot be reserved).
    pub pooling: bool,
    /// Where `data/add` may fetch files from.
    pub transfers: TransferConfig,
    /// Threads of their own for guest code (a spinning guest then cannot hold up the caller's
    /// runtime; the server uses one per core); `None` runs guests on the runtime that creates
    /// the episodes, with the fewest hand-offs, for in-process use.
    pub guest_threads: Option<usize>,
    /// How many snapshots keep a pre-initialised image for their restores (the least recently
    /// restored loses its image first); 0 makes every restore replay its journal. An image
    /// holds the compiled component and the instance's memory, a few MiB for small guests.
    pub snapshot_images: usize,
    /// The agents, bound to these environments.
    pub agents: Vec<AgentConfig>,
    /// The most agent turns running at once (each holds an instance; the pool holds this many
    /// more when there are agents); a turn beyond it answers `failed{code: "host_busy",
    /// retryable: true}`.
    pub max_turns: usize,
    /// The agents' model endpoint; without one every model call of a turn fails
    /// `invalid-request`.
    pub model: Option<ModelEndpoint>,
    /// Where sessions' histories are kept, a JSON Lines file each (docs/agents.md#sessions);
    /// in memory when `None`.
    pub sessions_dir: Option<PathBuf>,
}

impl HostConfig {
    /// `environments` with room for 1,000 episodes, pooled, default transfers, guests on the
    /// caller's runtime, no computers, no agents.
    pub fn new(environments: Vec<EnvironmentConfig>) -> Self {
        Self {
            environments,
            computers: Vec::new(),
            max_episodes: 1_000,
            pooling: true,
            transfers: TransferConfig::default(),
            guest_threads: None,
            snapshot_images: DEFAULT_SNAPSHOT_IMAGES,
            agents: Vec::new(),
            max_turns: 1_000,
            model: None,
            sessions_dir: None,
        }
    }
}

/// [`HostConfig::snapshot_images`] by default.
pub const DEFAULT_SNAPSHOT_IMAGES: usize = 16;
