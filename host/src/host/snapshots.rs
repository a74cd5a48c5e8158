//! Snapshots, forks and restores: a snapshot is an episode's seed, tool-access rules and
//! journal; restoring one replays the journal into a fresh instance of the same component.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::{CreateError, Episode, Host};
use crate::runtime::{self, CallError, Snapshot, SnapshotFileError};

/// The most snapshots a host keeps at once.
pub const MAX_SNAPSHOTS: usize = 10_000;

/// Why a snapshot could not be taken, stored or restored.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// No snapshot has that id.
    #[error("no snapshot {0:?}")]
    Unknown(String),
    /// The host keeps its maximum of snapshots.
    #[error("the host keeps its maximum of {MAX_SNAPSHOTS} snapshots; delete one first")]
    Full,
    /// The uploaded file is not a snapshot this envhost reads.
    #[error(transparent)]
    File(#[from] SnapshotFileError),
    /// No loaded environment has the snapshot's component.
    #[error(
        "the snapshot is of component {digest} (environment {name:?}), which this host does not serve; it serves {served}"
    )]
    OtherComponent {
        /// The snapshot's component digest.
        digest: String,
        /// The snapshot's environment name.
        name: String,
        /// The served environments with their digests.
        served: String,
    },
    /// The episode could not answer its journal (its queue is full, or it stopped).
    #[error(transparent)]
    Episode(CallError),
    /// The restore could not create an episode (the episode cap, a failed instantiation, or a
    /// replay that diverged, naming the call).
    #[error(transparent)]
    Restore(CreateError),
}

/// The snapshots a host keeps, by id.
#[derive(Default)]
pub(super) struct Snapshots {
    stored: Mutex<HashMap<String, Arc<Snapshot>>>,
}

impl Snapshots {
    fn insert(&self, snapshot: Snapshot) -> Result<String, SnapshotError> {
        let mut stored = self.stored.lock().unwrap_or_else(PoisonError::into_inner);
        if stored.len() >= MAX_SNAPSHOTS {
            return Err(SnapshotError::Full);
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        stored.insert(id.clone(), Arc::new(snapshot));
        Ok(id)
    }

    fn get(&self, id: &str) -> Option<Arc<Snapshot>> {
        self.stored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    fn remove(&self, id: &str) -> bool {
        self.stored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .is_some()
    }

    fn ids(&self) -> Vec<String> {
        self.stored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }
}

impl Host {
    /// Snapshots `episode` as of every call made into it before this one, and keeps the
    /// snapshot: answers its id.
    ///
    /// # Errors
    /// [`SnapshotError::Episode`] when the episode's queue is full; [`SnapshotError::Full`].
    pub async fn snapshot(&self, episode: &Episode) -> Result<String, SnapshotError> {
        let snapshot = self.take_snapshot(episode).await?;
        self.snapshots.insert(snapshot)
    }

    async fn take_snapshot(&self, episode: &Episode) -> Result<Snapshot, SnapshotError> {
        let runtime = episode.runtime();
        let journal = runtime.journal().await.map_err(SnapshotError::Episode)?;
        let environment = runtime.environment();
        Ok(Snapshot {
            environment: episode.catalog().name.clone(),
            digest: environment.digest().to_owned(),
            seed: runtime.seed(),
            tool_access: episode.tool_access(),
            journal,
        })
    }

    /// The snapshot `id`.
    pub fn snapshot_by_id(&self, id: &str) -> Option<Arc<Snapshot>> {
        self.snapshots.get(id)
    }

    /// The ids of the snapshots kept, in no particular order.
    pub fn snapshot_ids(&self) -> Vec<String> {
        self.snapshots.ids()
    }

    /// Deletes snapshot `id`; false when there is none.
    pub fn delete_snapshot(&self, id: &str) -> bool {
        self.snapshots.remove(id)
    }

    /// Keeps the snapshot in `file` (a snapshot file, as [`Snapshot::to_file`] writes it) if
    /// this host serves its component: answers its id.
    ///
    /// # Errors
    /// [`SnapshotError::File`], [`SnapshotError::OtherComponent`], [`SnapshotError::Full`].
    pub fn import_snapshot(&self, file: &[u8]) -> Result<String, SnapshotError> {
        let snapshot = Snapshot::from_file(file)?;
        self.catalog_for(&snapshot)?;
        self.snapshots.insert(snapshot)
    }

    /// A new episode from snapshot `id`: its journal replayed into a fresh instance of the
    /// same component (every call checked against its recorded answer), with the snapshot's
    /// seed and tool-access rules.
    ///
    /// # Errors
    /// [`SnapshotError::Unknown`]; [`SnapshotError::Restore`] for the episode cap, a failed
    /// instantiation or a diverging replay.
    pub async fn restore(&self, id: &str) -> Result<Arc<Episode>, SnapshotError> {
        let snapshot = self
            .snapshots
            .get(id)
            .ok_or_else(|| SnapshotError::Unknown(id.to_owned()))?;
        self.restore_snapshot(&snapshot).await
    }

    /// Snapshots `episode` and restores the snapshot into a new episode: answers the snapshot's
    /// id and the new episode, which goes on from the same state independently.
    ///
    /// # Errors
    /// As [`Host::snapshot`] and [`Host::restore`].
    pub async fn fork(&self, episode: &Episode) -> Result<(String, Arc<Episode>), SnapshotError> {
        let snapshot = Arc::new(self.take_snapshot(episode).await?);
        let fork = self.restore_snapshot(&snapshot).await?;
        let id = self.snapshots.insert(Arc::unwrap_or_clone(snapshot))?;
        Ok((id, fork))
    }

    async fn restore_snapshot(&self, snapshot: &Snapshot) -> Result<Arc<Episode>, SnapshotError> {
        let catalog = self.catalog_for(snapshot)?.clone();
        let episode = self
            .admit(catalog, |environment, id, threads| {
                runtime::Episode::restore(
                    environment,
                    id,
                    threads,
                    snapshot.seed,
                    snapshot.journal.clone(),
                )
            })
            .await
            .map_err(SnapshotError::Restore)?;
        episode.set_tool_access(snapshot.tool_access.clone());
        Ok(episode)
    }

    fn catalog_for(&self, snapshot: &Snapshot) -> Result<&Arc<super::Catalog>, SnapshotError> {
        self.environments
            .iter()
            .find(|c| c.environment.digest() == snapshot.digest)
            .ok_or_else(|| SnapshotError::OtherComponent {
                digest: snapshot.digest.clone(),
                name: snapshot.environment.clone(),
                served: self
                    .environments
                    .iter()
                    .map(|c| format!("{} ({})", c.name, c.environment.digest()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}
