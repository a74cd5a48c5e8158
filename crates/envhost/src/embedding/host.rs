//! [`Host`]: environments, computer drivers and agents loaded once, and the episodes of the
//! environments, created, found, dropped and evicted within the host's cap (the computers'
//! are in [`super::computers`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use envhost_runtime::agent::AgentLoadError;
use envhost_runtime::{
    CallError, Environment, GuestThreads, LoadError, Runner, Runtime, RuntimeConfig,
};

use super::agents::Agents;
use super::catalog::{Catalog, CatalogError};
use super::computers::Computers;
use super::config::HostConfig;
use super::driver_catalog::ComputerLoadError;
use super::episode::{DataError, Episode};
use super::metrics::Metrics;
use super::registry::{Cap, Registry};
use super::snapshot_store::{Images, Snapshots};
use crate::ids;
use crate::transfers::Resolver;
use envhost_protocol::Part;
use envhost_protocol::error::CodedError;

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// Neither an environment nor a computer driver was given.
    #[error("no environment to serve")]
    NoEnvironment,
    /// Two environments share a name.
    #[error(
        "two environments are named {0:?}: name one otherwise, as NAME=PATH.wasm on the command \
         line or with `name` in the configuration file"
    )]
    DuplicateName(String),
    /// An environment could not be loaded.
    #[error("environment {name} ({}): {why}", .component.display())]
    Load {
        /// The environment.
        name: String,
        /// Its component's file.
        component: std::path::PathBuf,
        /// Why.
        why: LoadError,
    },
    /// A tool's schema does not compile.
    #[error("environment {name}: {why}")]
    Catalog {
        /// The environment.
        name: String,
        /// Why.
        why: CatalogError,
    },
    /// The engine refused its configuration.
    #[error(transparent)]
    Runtime(LoadError),
    /// The HTTP client for `data/add` could not be built.
    #[error("{0}")]
    Transfers(String),
    /// An agent could not be bound: to an environment not served, or under a name taken.
    #[error("agent {name}: {why}")]
    Agent {
        /// The agent.
        name: String,
        /// Why.
        why: String,
    },
    /// An agent's component could not be read or loaded.
    #[error("agent {name} ({}): {why}", .component.display())]
    AgentLoad {
        /// The agent.
        name: String,
        /// Its component's file.
        component: std::path::PathBuf,
        /// Why.
        why: AgentLoadError,
    },
    /// The sessions' directory could not be made.
    #[error("the sessions directory: {0}")]
    Sessions(String),
    /// Two computer drivers share a name.
    #[error("two computers are named {0:?}: name one otherwise")]
    DuplicateComputer(String),
    /// A computer driver could not be loaded.
    #[error("computer {name} ({}): {why}", .component.display())]
    Computer {
        /// The computer's name in the host.
        name: String,
        /// Its component's file.
        component: std::path::PathBuf,
        /// Why.
        why: ComputerLoadError,
    },
}

/// Why an episode could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// No environment has that name.
    #[error("no environment named {name:?}; this host serves {}", .served.join(", "))]
    UnknownEnvironment {
        /// The name asked for.
        name: String,
        /// The names of the environments the host serves, in its order.
        served: Vec<String>,
    },
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

impl CreateError {
    /// The coded error of `self` (http-api.md#episodes): 404 `environment_not_found`, 503
    /// `too_many_episodes` and `unavailable` (both retryable).
    pub fn to_coded(&self) -> CodedError {
        let (code, status, retryable) = match self {
            Self::UnknownEnvironment { .. } => ("environment_not_found", 404, false),
            Self::Full { .. } => ("too_many_episodes", 503, true),
            Self::Instantiate(_) => ("unavailable", 503, true),
        };
        let mut error = CodedError::new(code, self.to_string());
        error.status = status;
        error.retryable = retryable;
        error
    }
}

/// Why a seeded episode could not be made ([`Host::create_seeded_episode`]).
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The episode could not be created.
    #[error(transparent)]
    Create(#[from] CreateError),
    /// The episode was created, but its `data/add` failed; it has been dropped.
    #[error(transparent)]
    Data(#[from] DataError),
}

/// How long a load may take before it is said to be compiling: loading a component that was
/// compiled before, from wasmtime's cache, takes milliseconds.
const COMPILING_AFTER: Duration = Duration::from_millis(500);

/// How often a line reports an environment still compiling.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Cranelift's pace on a 2-core machine, in component bytes a second (measured on the example
/// guests: 1.3 MiB/s for the JavaScript slack, 2.5 MiB/s for the Python one); what a first
/// start's estimate is made from.
const COMPILED_BYTES_PER_SECOND: u64 = 2 << 20;

/// Awaits `load` of the component of `bytes` bytes, saying once it has taken
/// [`COMPILING_AFTER`] that it is compiling and about how long that takes, then logging a line
/// every [`PROGRESS_EVERY`] until it ends.
async fn with_progress<T>(
    name: &str,
    bytes: u64,
    started: Instant,
    load: impl Future<Output = T>,
) -> T {
    let mut load = std::pin::pin!(load);
    let mut progress = tokio::time::interval_at(
        tokio::time::Instant::now() + COMPILING_AFTER,
        PROGRESS_EVERY,
    );
    let mut said = false;
    loop {
        tokio::select! {
            done = &mut load => return done,
            _ = progress.tick() => {
                let seconds = started.elapsed().as_secs();
                if said {
                    tracing::info!(environment = %name, seconds, "still compiling");
                } else {
                    said = true;
                    let estimate = (bytes / COMPILED_BYTES_PER_SECOND).max(1);
                    tracing::info!(
                        environment = %name,
                        "compiling {name} ({:.1} MiB) with Cranelift: a component's first start \
                         takes about {estimate} s on two cores; later starts load it from \
                         wasmtime's cache in milliseconds",
                        bytes as f64 / f64::from(1 << 20),
                    );
                }
            }
        }
    }
}

/// Environments, computer drivers and agents loaded once, and their episodes.
pub struct Host {
    pub(super) runtime: Runtime,
    pub(super) environments: Vec<Arc<Catalog>>,
    pub(super) registry: Registry<Episode>,
    pub(super) computers: Computers,
    pub(super) resolver: Resolver,
    pub(super) metrics: Arc<Metrics>,
    pub(super) threads: GuestThreads,
    pub(super) snapshots: Snapshots,
    pub(super) images: Images,
    pub(super) epoch: Instant,
    pub(super) agents: Agents,
}

impl Host {
    /// Compiles every environment, computer driver and agent of `config` (or loads it from the
    /// compiled-artefact cache), with a log line while each environment compiles.
    ///
    /// # Errors
    /// [`HostError`] naming the component that failed.
    pub async fn new(config: HostConfig) -> Result<Self, HostError> {
        if config.environments.is_empty() && config.computers.is_empty() {
            return Err(HostError::NoEnvironment);
        }
        let max_memory_bytes = config
            .environments
            .iter()
            .map(|e| e.limits.memory_bytes)
            .chain(config.computers.iter().map(|c| c.limits.memory_bytes))
            .chain(config.agents.iter().map(|a| a.limits.memory_bytes))
            .max()
            .unwrap_or_default();
        let pooled_instances = config.pooling.then(|| {
            let turns = if config.agents.is_empty() {
                0
            } else {
                config.max_turns
            };
            u32::try_from(config.max_episodes.saturating_add(turns)).unwrap_or(u32::MAX)
        });
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
            let size = std::fs::metadata(&env.component).map_or(0, |m| m.len());
            let environment = with_progress(&env.name, size, started, load)
                .await
                .map_err(|why| HostError::Load {
                    name: env.name.clone(),
                    component: env.component.clone(),
                    why,
                })?;
            let catalog = Catalog::new(env.name.clone(), Arc::new(environment), env.idle_timeout)
                .map_err(|why| HostError::Catalog {
                name: env.name.clone(),
                why,
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
        let names: Vec<&str> = environments.iter().map(|e| e.name.as_str()).collect();
        let agents = Agents::load(&runtime, &config, &names).await?;
        let cap = Cap::new(config.max_episodes);
        let computers = Computers::load(&runtime, &config, cap.clone()).await?;
        let resolver = Resolver::new(&config.transfers).map_err(HostError::Transfers)?;
        let threads = match config.guest_threads {
            Some(n) => GuestThreads::dedicated(n)
                .map_err(|e| HostError::Runtime(LoadError::Engine(e.to_string())))?,
            None => GuestThreads::shared(),
        };
        Ok(Self {
            runtime,
            environments,
            registry: Registry::new(cap),
            computers,
            resolver,
            metrics: Arc::new(Metrics::new(capacity)),
            threads,
            snapshots: Snapshots::default(),
            images: Images::new(config.snapshot_images),
            epoch: Instant::now(),
            agents,
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

    /// The runtime its environments, drivers and agents are compiled with.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
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
            .ok_or_else(|| CreateError::UnknownEnvironment {
                name: environment.to_owned(),
                served: self.environments.iter().map(|e| e.name.clone()).collect(),
            })?
            .clone();
        self.admit(catalog, Runner::start).await
    }

    /// Creates an episode of `environment` and loads `parts` into it with one `data/add`
    /// (protocol.md#add-data) before answering: a seeded episode in one call. When the add
    /// fails the episode is dropped. To start many episodes from the same data, seed one,
    /// snapshot it and [`Host::restore`] the snapshot instead: a restore instantiates the
    /// snapshot's pre-initialised image and runs no `data/add`.
    ///
    /// # Errors
    /// [`SeedError::Create`] as [`Host::create_episode`]; [`SeedError::Data`] as
    /// [`Episode::add_data`] (no parts, a file that cannot be fetched, the environment's
    /// refusal).
    pub async fn create_seeded_episode(
        &self,
        environment: &str,
        parts: Vec<Part>,
    ) -> Result<Arc<Episode>, SeedError> {
        let episode = self.create_episode(environment).await?;
        if let Err(e) = episode.add_data(parts).await {
            self.drop_episode(episode.id());
            return Err(e.into());
        }
        Ok(episode)
    }

    /// Registers an episode of `catalog` made by `make` (from the environment, the episode's
    /// id and the guest threads), within the episode cap.
    pub(super) async fn admit<'a, F, Fut>(
        &'a self,
        catalog: Arc<Catalog>,
        make: F,
    ) -> Result<Arc<Episode>, CreateError>
    where
        F: FnOnce(Arc<Environment>, String, &'a GuestThreads) -> Fut,
        Fut: Future<Output = Result<Runner, CallError>>,
    {
        let Some(slot) = self.registry.reserve() else {
            self.metrics.refused.inc();
            return Err(CreateError::Full {
                max: self.registry.max(),
            });
        };
        let (key, id) = ids::fresh();
        let runner = make(catalog.environment.clone(), id.clone(), &self.threads)
            .await
            .map_err(CreateError::Instantiate)?;
        let episode = Arc::new(Episode::new(
            (key, id),
            catalog,
            runner,
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

    /// The keys of every episode alive ([`crate::ids`]).
    pub(crate) fn episode_keys(&self) -> rustc_hash::FxHashSet<u128> {
        self.registry.keys()
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

    /// Evicts the episodes idle past their environment's idle timeout or past their lifetime
    /// ([`Episode::expire_after`]), except `keep`; answers how many. Nothing evicts on its own: the HTTP server calls this every second, and an
    /// embedder that sets idle timeouts calls it as often as it wants them enforced.
    pub fn evict_idle(&self, keep: Option<&str>) -> usize {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        let idle = |e: &Episode| {
            Some(e.id()) != keep
                && (e.expired(now)
                    || e.catalog()
                        .idle_timeout
                        .is_some_and(|timeout| u128::from(e.idle_ms(now)) > timeout.as_millis()))
        };
        let (evicted, live) = self.registry.remove_where(idle);
        if evicted > 0 {
            self.metrics.evicted.inc_by(evicted as u64);
            self.metrics.set_live(live);
            tracing::info!(evicted, live, "evicted idle or expired episodes");
        }
        evicted
    }
}
