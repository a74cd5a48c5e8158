//! A host's computers (docs/computer.md): its drivers, loaded once, and their computers, each
//! an episode under the host's cap, created, found, dropped, forked, snapshotted in memory and
//! restored.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use envhost_protocol::computer::settings::Settings;
use envhost_protocol::error::CodedError;
use envhost_runtime::Runtime;
use envhost_runtime::driver::ForkError;

use super::computer_episode::ComputerEpisode;
use super::config::HostConfig;
use super::driver_catalog::DriverCatalog;
use super::host::{Host, HostError};
use super::registry::{Cap, Registry, Slot};
use super::snapshot_store::MAX_SNAPSHOTS;
use crate::computer::{Computer, ComputerSnapshot};
use crate::ids;

/// Why a computer could not be created, forked, snapshotted or restored.
#[derive(Debug, thiserror::Error)]
pub enum ComputerError {
    /// No driver has that name.
    #[error("no computer named {name:?}; this host serves {}", .served.join(", "))]
    UnknownComputer {
        /// The name asked for.
        name: String,
        /// The names of the drivers the host serves, in its order.
        served: Vec<String>,
    },
    /// The host holds its maximum of episodes (environments' and computers' together).
    #[error("the host holds its maximum of {max} episodes; drop one or retry later")]
    Full {
        /// The maximum.
        max: usize,
    },
    /// The new computer's driver instance could not be started.
    #[error("starting the driver: {0}")]
    Start(String),
    /// The fork or restore failed: a driver granted a display, an instance that cannot be
    /// made, a journal whose replay faults.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// No snapshot has that id.
    #[error("no snapshot {0:?}")]
    UnknownSnapshot(String),
    /// The host keeps its maximum of computers' snapshots.
    #[error("the host keeps its maximum of {MAX_SNAPSHOTS} snapshots; delete one first")]
    TooManySnapshots,
}

impl ComputerError {
    /// The coded error of `self` (docs/computer.md#episodes-and-forks): 404
    /// `computer_not_found` and `snapshot_not_found`, 503 `too_many_episodes` (retryable) and
    /// `too_many_snapshots`, 409 `fork_unsupported` (a driver granted a display), 500
    /// `fork_failed`, 503 `unavailable` (retryable) for an instance that cannot be started.
    pub fn to_coded(&self) -> CodedError {
        let (code, status, retryable) = match self {
            Self::UnknownComputer { .. } => ("computer_not_found", 404, false),
            Self::Full { .. } => ("too_many_episodes", 503, true),
            Self::Start(_) => ("unavailable", 503, true),
            Self::Fork(ForkError::Display(_)) => ("fork_unsupported", 409, false),
            Self::Fork(_) => ("fork_failed", 500, false),
            Self::UnknownSnapshot(_) => ("snapshot_not_found", 404, false),
            Self::TooManySnapshots => ("too_many_snapshots", 503, false),
        };
        let mut error = CodedError::new(code, self.to_string());
        error.status = status;
        error.retryable = retryable;
        error
    }
}

/// A computer's state kept in memory by its host: what [`Host::restore_computer`] starts
/// from, as often as wanted.
pub struct KeptComputer {
    id: String,
    catalog: Arc<DriverCatalog>,
    state: ComputerSnapshot,
}

impl KeptComputer {
    /// The snapshot's id in its host.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The driver it is a computer of.
    pub fn catalog(&self) -> &Arc<DriverCatalog> {
        &self.catalog
    }

    /// How many input operations a restore replays.
    pub fn inputs(&self) -> usize {
        self.state.inputs()
    }
}

/// The drivers of a host, their computers and the computers' snapshots.
pub(super) struct Computers {
    drivers: Vec<Arc<DriverCatalog>>,
    registry: Registry<ComputerEpisode>,
    snapshots: Mutex<HashMap<String, Arc<KeptComputer>>>,
}

impl Computers {
    /// Loads `config`'s drivers with `runtime`; their computers count against `cap`.
    pub(super) async fn load(
        runtime: &Runtime,
        config: &HostConfig,
        cap: Arc<Cap>,
    ) -> Result<Self, HostError> {
        let mut drivers: Vec<Arc<DriverCatalog>> = Vec::new();
        for computer in &config.computers {
            if drivers.iter().any(|d| d.name == computer.name) {
                return Err(HostError::DuplicateComputer(computer.name.clone()));
            }
            let started = Instant::now();
            tracing::info!(computer = %computer.name, component = %computer.component.display(), "loading");
            let catalog = DriverCatalog::load(runtime, computer)
                .await
                .map_err(|why| HostError::Computer {
                    name: computer.name.clone(),
                    component: computer.component.clone(),
                    why,
                })?;
            tracing::info!(
                computer = %computer.name,
                took_ms = started.elapsed().as_millis(),
                "loaded"
            );
            drivers.push(Arc::new(catalog));
        }
        Ok(Self {
            drivers,
            registry: Registry::new(cap),
            snapshots: Mutex::default(),
        })
    }

    fn snapshots(&self) -> MutexGuard<'_, HashMap<String, Arc<KeptComputer>>> {
        self.snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Host {
    /// The computer drivers, in the configuration's order.
    pub fn drivers(&self) -> &[Arc<DriverCatalog>] {
        &self.computers.drivers
    }

    /// The computer driver named `name`.
    pub fn driver(&self, name: &str) -> Option<&Arc<DriverCatalog>> {
        self.computers.drivers.iter().find(|d| d.name == name)
    }

    /// Creates a computer of the driver `name`: a fresh instance with its configured settings,
    /// no frames, its own tool-access rules and commands.
    ///
    /// # Errors
    /// [`ComputerError`]: an unknown driver, the episode cap, an instance that cannot start.
    pub async fn create_computer(&self, name: &str) -> Result<Arc<ComputerEpisode>, ComputerError> {
        let settings = self.known_driver(name)?.settings().clone();
        self.create_computer_with(name, settings).await
    }

    /// [`Host::create_computer`] starting from `settings` rather than the configured ones (the
    /// server's new computers take the root computer's settings as they are now).
    ///
    /// # Errors
    /// As [`Host::create_computer`].
    pub async fn create_computer_with(
        &self,
        name: &str,
        settings: Settings,
    ) -> Result<Arc<ComputerEpisode>, ComputerError> {
        let catalog = self.known_driver(name)?.clone();
        let slot = self.computer_slot()?;
        let driver = catalog.driver().clone();
        let instance = driver
            .instantiate("episode")
            .await
            .map_err(|e| ComputerError::Start(format!("{e:#}")))?;
        let computer = Computer::new(driver, instance, settings);
        Ok(self.register(slot, catalog, computer))
    }

    fn known_driver(&self, name: &str) -> Result<&Arc<DriverCatalog>, ComputerError> {
        self.driver(name)
            .ok_or_else(|| ComputerError::UnknownComputer {
                name: name.to_owned(),
                served: self.drivers().iter().map(|d| d.name.clone()).collect(),
            })
    }

    /// A place for one more episode, or [`ComputerError::Full`].
    fn computer_slot(&self) -> Result<Slot<'_, ComputerEpisode>, ComputerError> {
        self.computers
            .registry
            .reserve()
            .ok_or(ComputerError::Full {
                max: self.computers.registry.max(),
            })
    }

    fn register(
        &self,
        slot: Slot<'_, ComputerEpisode>,
        catalog: Arc<DriverCatalog>,
        computer: Arc<Computer>,
    ) -> Arc<ComputerEpisode> {
        let (key, id) = ids::fresh();
        let episode = Arc::new(ComputerEpisode::new((key, id), catalog, computer));
        slot.fill(key, episode.clone());
        episode
    }

    /// The computer `id`.
    pub fn computer(&self, id: &str) -> Option<Arc<ComputerEpisode>> {
        self.computers.registry.get(id)
    }

    /// Every computer alive, in no particular order.
    pub fn computers(&self) -> Vec<Arc<ComputerEpisode>> {
        self.computers.registry.all()
    }

    /// Drops computer `id` (its instance goes once its last operation ends); false when there
    /// is none.
    pub fn drop_computer(&self, id: &str) -> bool {
        self.computers.registry.remove(id).is_some()
    }

    /// A new computer in `from`'s state now (computer.md#episodes-and-forks): its input journal
    /// replayed into a fresh instance of the same driver with the same seed, its settings, held
    /// keys and readiness copied; no frames, so its caller takes a screenshot first.
    ///
    /// # Errors
    /// [`ComputerError::Full`]; [`ComputerError::Fork`] for a driver granted a display or a
    /// replay that faults.
    pub async fn fork_computer(
        &self,
        from: &ComputerEpisode,
    ) -> Result<Arc<ComputerEpisode>, ComputerError> {
        let slot = self.computer_slot()?;
        let fork = from.computer().fork("fork").await?;
        Ok(self.register(slot, from.catalog().clone(), fork))
    }

    /// Keeps `from`'s state now in memory (its input journal, seed, settings and held keys)
    /// under a fresh id, for [`Host::restore_computer`].
    ///
    /// # Errors
    /// [`ComputerError::Fork`] for a driver granted a display; [`ComputerError::TooManySnapshots`].
    pub async fn snapshot_computer(
        &self,
        from: &ComputerEpisode,
    ) -> Result<Arc<KeptComputer>, ComputerError> {
        let state = from.state().await?;
        let mut snapshots = self.computers.snapshots();
        if snapshots.len() >= MAX_SNAPSHOTS {
            return Err(ComputerError::TooManySnapshots);
        }
        let kept = Arc::new(KeptComputer {
            id: ids::fresh().1,
            catalog: from.catalog().clone(),
            state,
        });
        snapshots.insert(kept.id.clone(), kept.clone());
        Ok(kept)
    }

    /// A new computer in the state snapshot `id` kept: as [`Host::fork_computer`] of that
    /// moment.
    ///
    /// # Errors
    /// [`ComputerError::UnknownSnapshot`]; [`ComputerError::Full`]; [`ComputerError::Fork`] for
    /// a replay that faults.
    pub async fn restore_computer(&self, id: &str) -> Result<Arc<ComputerEpisode>, ComputerError> {
        let kept = self
            .computer_snapshot(id)
            .ok_or_else(|| ComputerError::UnknownSnapshot(id.to_owned()))?;
        let slot = self.computer_slot()?;
        let driver = kept.catalog.driver().clone();
        let computer = Computer::restore(driver, &kept.state, "restore").await?;
        Ok(self.register(slot, kept.catalog.clone(), computer))
    }

    /// The computers' snapshot `id`.
    pub fn computer_snapshot(&self, id: &str) -> Option<Arc<KeptComputer>> {
        self.computers.snapshots().get(id).cloned()
    }

    /// Every computers' snapshot kept, in no particular order.
    pub fn computer_snapshots(&self) -> Vec<Arc<KeptComputer>> {
        self.computers.snapshots().values().cloned().collect()
    }

    /// Forgets the computers' snapshot `id`; false when there is none.
    pub fn delete_computer_snapshot(&self, id: &str) -> bool {
        self.computers.snapshots().remove(id).is_some()
    }
}
