//! The embedding API: [`Host`] loads environments once and creates isolated [`Episode`]s of
//! them in microseconds, many in one process; each episode answers the protocol's operations
//! in-process with the same semantics and errors as over HTTP (the server is a thin layer over
//! this module).
//!
//! An episode's calls run one at a time, each on its caller's own task while its guest answers
//! within an epoch tick (no hand-off to another task or thread); a call whose guest computes
//! longer moves to a task of its own, so dropping the caller's future never stops a guest
//! mid-call. Call from any task, or from `Runtime::block_on`. Idle episodes are evicted only
//! when [`Host::evict_idle`] runs (the HTTP server runs it every second).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use envhost::host::{EnvironmentConfig, Host, HostConfig};
//! use envhost::protocol::part::Part;
//! use envhost::protocol::role::Caller;
//!
//! let host = Host::new(HostConfig::new(vec![EnvironmentConfig::new("slack", "slack.wasm")])).await?;
//! let episode = host.create_episode("slack").await?;
//! episode.reset().await?;
//! let seed = serde_json::json!({"channels": [{"name": "general", "topic": "chat"}]});
//! let data = seed.as_object().cloned().unwrap_or_default();
//! episode.add_data(vec![Part::Data { data, metadata: None }]).await?;
//! let args = serde_json::json!({"channel": "general", "text": "hi"});
//! let result = episode
//!     .call_tool("slack_send_message", args.as_object().cloned().unwrap_or_default(), Caller::default())
//!     .await;
//! println!("{:?}", result.structured_content);
//! host.drop_episode(episode.id());
//! # Ok(()) }
//! ```

mod catalog;
mod episode;
mod ids;
mod metrics;
mod registry;
pub mod sessions;
mod snapshots;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use catalog::{Catalog, CatalogError, Route, ServedTool};
pub use episode::{DataError, Episode};
pub use metrics::{CallKind, Metrics};
pub use snapshots::{MAX_SNAPSHOTS, SnapshotError};

use crate::runtime::{
    CallError, Environment, GuestThreads, Limits, LoadError, Runtime, RuntimeConfig,
};
use crate::transfers::{Resolver, TransferConfig};
use registry::Registry;

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

/// What a host serves.
#[derive(Clone, Debug, PartialEq)]
pub struct HostConfig {
    /// The environments, the first being the default.
    pub environments: Vec<EnvironmentConfig>,
    /// The most episodes alive at once; creations beyond it are refused.
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
}

impl HostConfig {
    /// `environments` with room for 1,000 episodes, pooled, default transfers, guests on the
    /// caller's runtime.
    pub fn new(environments: Vec<EnvironmentConfig>) -> Self {
        Self {
            environments,
            max_episodes: 1_000,
            pooling: true,
            transfers: TransferConfig::default(),
            guest_threads: None,
            snapshot_images: DEFAULT_SNAPSHOT_IMAGES,
        }
    }
}

/// [`HostConfig::snapshot_images`] by default.
pub const DEFAULT_SNAPSHOT_IMAGES: usize = 16;

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No environment was given.
    #[error("no environment to serve")]
    NoEnvironment,
    /// Two environments share a name.
    #[error("two environments are named {0:?}")]
    DuplicateName(String),
    /// An environment could not be loaded.
    #[error("environment {name}: {source}")]
    Load {
        /// The environment.
        name: String,
        /// Why.
        source: LoadError,
    },
    /// A tool's schema does not compile.
    #[error("environment {name}: {source}")]
    Catalog {
        /// The environment.
        name: String,
        /// Why.
        source: CatalogError,
    },
    /// The engine refused its configuration.
    #[error(transparent)]
    Runtime(LoadError),
    /// The HTTP client for `data/add` could not be built.
    #[error("{0}")]
    Transfers(String),
}

/// Why an episode could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// No environment has that name.
    #[error("no environment named {0:?}")]
    UnknownEnvironment(String),
    /// The host holds its maximum of episodes.
    #[error("the host holds its maximum of {max} episodes; drop one or retry later")]
    Full {
        /// The maximum.
        max: usize,
    },
    /// Instantiation failed.
    #[error(transparent)]
    Instantiate(CallError),
}

/// How often a line reports an environment still loading.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Awaits `load`, logging a line every [`PROGRESS_EVERY`] while it runs (compiling a large
/// component takes seconds).
async fn with_progress<T>(name: &str, started: Instant, load: impl Future<Output = T>) -> T {
    let mut load = std::pin::pin!(load);
    let mut progress =
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tokio::select! {
            done = &mut load => return done,
            _ = progress.tick() => {
                tracing::info!(environment = %name, seconds = started.elapsed().as_secs(), "still compiling");
            }
        }
    }
}

/// Environments loaded once, and their episodes.
pub struct Host {
    runtime: Runtime,
    environments: Vec<Arc<Catalog>>,
    registry: Registry,
    resolver: Resolver,
    metrics: Arc<Metrics>,
    threads: GuestThreads,
    snapshots: snapshots::Snapshots,
    images: snapshots::Images,
    epoch: Instant,
}

impl Host {
    /// Compiles every environment of `config` (or loads it from the compiled-artefact cache),
    /// with a log line while each compiles.
    ///
    /// # Errors
    /// [`HostError`] naming the environment that failed.
    pub async fn new(config: HostConfig) -> Result<Self, HostError> {
        if config.environments.is_empty() {
            return Err(HostError::NoEnvironment);
        }
        let max_memory_bytes = config
            .environments
            .iter()
            .map(|e| e.limits.memory_bytes)
            .max()
            .unwrap_or_default();
        let pooled_instances = config
            .pooling
            .then(|| u32::try_from(config.max_episodes).unwrap_or(u32::MAX));
        let runtime = Runtime::with_config(&RuntimeConfig {
            pooled_instances,
            max_memory_bytes,
        })
        .map_err(HostError::Runtime)?;
        let mut environments: Vec<Arc<Catalog>> = Vec::new();
        for env in &config.environments {
            if environments.iter().any(|e| e.name == env.name) {
                return Err(HostError::DuplicateName(env.name.clone()));
            }
            let started = Instant::now();
            tracing::info!(environment = %env.name, component = %env.component.display(), "loading");
            let load =
                Environment::load(&runtime, &env.component, env.card_name.clone(), env.limits);
            let environment = with_progress(&env.name, started, load)
                .await
                .map_err(|source| HostError::Load {
                    name: env.name.clone(),
                    source,
                })?;
            let catalog = Catalog::new(env.name.clone(), Arc::new(environment), env.idle_timeout)
                .map_err(|source| HostError::Catalog {
                name: env.name.clone(),
                source,
            })?;
            tracing::info!(
                environment = %env.name,
                took_ms = started.elapsed().as_millis(),
                tools = catalog.tools.len(),
                "loaded"
            );
            environments.push(Arc::new(catalog));
        }
        let capacity = if runtime.is_pooled() {
            pooled_instances.unwrap_or(0)
        } else {
            0
        };
        let resolver = Resolver::new(&config.transfers).map_err(HostError::Transfers)?;
        let threads = match config.guest_threads {
            Some(n) => {
                GuestThreads::dedicated(n).map_err(|e| HostError::Runtime(LoadError::engine(e)))?
            }
            None => GuestThreads::shared(),
        };
        Ok(Self {
            runtime,
            environments,
            registry: Registry::new(config.max_episodes),
            resolver,
            metrics: Arc::new(Metrics::new(capacity)),
            threads,
            snapshots: snapshots::Snapshots::default(),
            images: snapshots::Images::new(config.snapshot_images),
            epoch: Instant::now(),
        })
    }

    /// The environments, the default first.
    pub fn environments(&self) -> &[Arc<Catalog>] {
        &self.environments
    }

    /// The environment named `name`.
    pub fn environment(&self, name: &str) -> Option<&Arc<Catalog>> {
        self.environments.iter().find(|e| e.name == name)
    }

    /// Whether instances come from the pool.
    pub fn is_pooled(&self) -> bool {
        self.runtime.is_pooled()
    }

    /// The host's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Creates an episode of `environment`: a fresh instance with empty data, its own tool
    /// access rules and MCP sessions.
    ///
    /// # Errors
    /// [`CreateError`]: an unknown environment, the episode cap, a failed instantiation.
    pub async fn create_episode(&self, environment: &str) -> Result<Arc<Episode>, CreateError> {
        let catalog = self
            .environment(environment)
            .ok_or_else(|| CreateError::UnknownEnvironment(environment.to_owned()))?
            .clone();
        self.admit(catalog, crate::runtime::Episode::new).await
    }

    /// Registers an episode of `catalog` made by `make` (from the environment, the episode's
    /// id and the guest threads), within the episode cap.
    async fn admit<'a, F, Fut>(
        &'a self,
        catalog: Arc<Catalog>,
        make: F,
    ) -> Result<Arc<Episode>, CreateError>
    where
        F: FnOnce(Arc<crate::runtime::Environment>, String, &'a GuestThreads) -> Fut,
        Fut: Future<Output = Result<crate::runtime::Episode, CallError>>,
    {
        let Some(slot) = self.registry.reserve() else {
            self.metrics.refused.inc();
            return Err(CreateError::Full {
                max: self.registry.max(),
            });
        };
        let (key, id) = ids::fresh();
        let inner = make(catalog.environment.clone(), id.clone(), &self.threads)
            .await
            .map_err(CreateError::Instantiate)?;
        let episode = Arc::new(Episode::new(
            id,
            catalog,
            inner,
            self.resolver.clone(),
            self.metrics.clone(),
            self.epoch,
        ));
        let live = slot.fill(key, episode.clone());
        self.metrics.created.inc();
        self.metrics.set_live(live);
        Ok(episode)
    }

    /// The episode `id`.
    pub fn episode(&self, id: &str) -> Option<Arc<Episode>> {
        self.registry.get(id)
    }

    /// Every episode alive, in no particular order.
    pub fn episodes(&self) -> Vec<Arc<Episode>> {
        self.registry.all()
    }

    /// Drops episode `id` (its instance goes back to the pool once its last call ends); false
    /// when there is none.
    pub fn drop_episode(&self, id: &str) -> bool {
        let Some(live) = self.registry.remove(id) else {
            return false;
        };
        self.metrics.dropped.inc();
        self.metrics.set_live(live);
        true
    }

    /// Evicts the episodes idle past their environment's idle timeout, except `keep`; answers
    /// how many. Nothing evicts on its own: the HTTP server calls this every second, and an
    /// embedder that sets idle timeouts calls it as often as it wants them enforced.
    pub fn evict_idle(&self, keep: Option<&str>) -> usize {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        let idle = |e: &Episode| {
            e.catalog().idle_timeout.is_some_and(|timeout| {
                Some(e.id()) != keep && u128::from(e.idle_ms(now)) > timeout.as_millis()
            })
        };
        let (evicted, live) = self.registry.remove_where(idle);
        if evicted > 0 {
            self.metrics.evicted.inc_by(evicted as u64);
            self.metrics.set_live(live);
            tracing::info!(evicted, live, "evicted idle episodes");
        }
        evicted
    }
}
