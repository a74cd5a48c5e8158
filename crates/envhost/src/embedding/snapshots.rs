//! Snapshots, forks and restores: a snapshot is an episode's seed, tool-access rules and
//! journal. A fork replays the journal into a fresh instance of the same component. A restore
//! of a kept snapshot makes, the first time, a pre-initialised image of the instance at the
//! journal's end, and instantiates the image from then on, so that a restore costs the same
//! whatever the journal's length; the images of the least recently restored snapshots are
//! dropped past [`super::HostConfig::snapshot_images`].

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use envhost_runtime::{
    CallError, Environment, GuestThreads, Image, ImageError, Runner, Snapshot, SnapshotFileError,
};

use super::catalog::Catalog;
use super::episode::Episode;
use super::host::{CreateError, Host};
use super::metrics::{ImageOutcome, Metrics, RestoreSource};
use super::snapshot_store::{ImageSlot, MAX_SNAPSHOTS};
use envhost_protocol::error::CodedError;

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
    /// The snapshot's pre-initialised image could not be made.
    #[error(transparent)]
    Image(#[from] ImageError),
}

/// What making an image needs, owned, for a background task.
struct ImageJob {
    id: String,
    snapshot: Arc<Snapshot>,
    environment: Arc<Environment>,
    metrics: Arc<Metrics>,
    slot: Arc<ImageSlot>,
}

impl ImageJob {
    /// Makes the image unless it is made (or being made: then waits for it); answers it, or
    /// `None` when the component cannot be pre-initialised.
    ///
    /// # Errors
    /// [`ImageError`] other than [`ImageError::Unsupported`] (a later call tries again).
    async fn run(&self) -> Result<Option<Arc<Image>>, ImageError> {
        let made = self.slot.image.get_or_try_init(|| self.make()).await;
        if made.is_err() {
            self.slot.started.store(false, Ordering::Relaxed);
        }
        made.cloned()
    }

    async fn make(&self) -> Result<Option<Arc<Image>>, ImageError> {
        let started = Instant::now();
        let image = Runner::image(
            self.environment.clone(),
            self.snapshot.seed,
            &self.snapshot.journal,
        )
        .await;
        match image {
            Ok(image) => {
                self.metrics.image(ImageOutcome::Made);
                tracing::info!(
                    snapshot = %self.id,
                    entries = image.entries(),
                    bytes = image.size(),
                    took_ms = started.elapsed().as_millis(),
                    "made the snapshot's pre-initialised image"
                );
                Ok(Some(Arc::new(image)))
            }
            Err(ImageError::Unsupported(why)) => {
                self.metrics.image(ImageOutcome::Unsupported);
                tracing::warn!(snapshot = %self.id, %why, "no image: restores of this snapshot replay its journal");
                Ok(None)
            }
            Err(e) => {
                self.metrics.image(ImageOutcome::Failed);
                Err(e)
            }
        }
    }
}

impl SnapshotError {
    /// The coded error of `self` (http-api.md#snapshots): 404 `snapshot_not_found`, 400
    /// `invalid_snapshot`, 409 `component_mismatch`, 409 `replay_diverged` (naming the journal
    /// entry), 503 `too_many_snapshots` / `too_many_episodes` / `unavailable` and 429 `busy`
    /// (these retryable), 500 `image_failed`.
    pub fn to_coded(&self) -> CodedError {
        let (code, status) = match self {
            Self::Unknown(_) => ("snapshot_not_found", 404),
            Self::Full => ("too_many_snapshots", 503),
            Self::File(_) => ("invalid_snapshot", 400),
            Self::OtherComponent { .. } => ("component_mismatch", 409),
            Self::Episode(CallError::Busy { .. }) => ("busy", 429),
            Self::Episode(_) => ("unavailable", 503),
            Self::Restore(CreateError::Full { .. }) => ("too_many_episodes", 503),
            Self::Restore(CreateError::Instantiate(CallError::Replay(_))) => {
                ("replay_diverged", 409)
            }
            Self::Restore(_) => ("unavailable", 503),
            Self::Image(ImageError::Replay(_)) => ("replay_diverged", 409),
            Self::Image(_) => ("image_failed", 500),
        };
        let mut error = CodedError::new(code, self.to_string());
        error.status = status;
        error.retryable = matches!(status, 429 | 503);
        error
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
        self.snapshots.insert(snapshot).ok_or(SnapshotError::Full)
    }

    async fn take_snapshot(&self, episode: &Episode) -> Result<Snapshot, SnapshotError> {
        let runner = episode.runner();
        let journal = runner.journal().await.map_err(SnapshotError::Episode)?;
        let environment = runner.environment();
        Ok(Snapshot {
            environment: episode.catalog().name.clone(),
            digest: environment.digest().to_owned(),
            seed: runner.seed(),
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

    /// Deletes snapshot `id` (and its image); false when there is none.
    pub fn delete_snapshot(&self, id: &str) -> bool {
        self.images.remove(id);
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
        self.snapshots.insert(snapshot).ok_or(SnapshotError::Full)
    }

    /// A new episode from snapshot `id`, with the snapshot's seed and tool-access rules, at
    /// the end of its journal. Once the snapshot has a pre-initialised image, restoring it is
    /// one instantiation of the image, whatever the journal's length; until then the journal is
    /// replayed into a fresh instance (every call checked against its recorded answer), and the
    /// first restore starts making the image in the background (as [`Host::prepare_image`]).
    ///
    /// # Errors
    /// [`SnapshotError::Unknown`]; [`SnapshotError::Restore`] for the episode cap, a failed
    /// instantiation or a diverging replay.
    pub async fn restore(&self, id: &str) -> Result<Arc<Episode>, SnapshotError> {
        let snapshot = self.snapshot_for(id)?;
        let Some(image) = self.image_or_start(id, &snapshot)? else {
            return self.restore_snapshot(&snapshot).await;
        };
        self.restore_with(
            &snapshot,
            RestoreSource::Image,
            |environment, id, threads| {
                Runner::from_image(
                    environment,
                    id,
                    threads,
                    snapshot.seed,
                    snapshot.journal.clone(),
                    &image,
                )
            },
        )
        .await
    }

    /// Snapshot `id`'s image when it is made; otherwise `None`, having started making it in the
    /// background unless that has started already.
    fn image_or_start(
        &self,
        id: &str,
        snapshot: &Arc<Snapshot>,
    ) -> Result<Option<Arc<Image>>, SnapshotError> {
        let Some(job) = self.image_job(id, snapshot)? else {
            return Ok(None);
        };
        if let Some(made) = job.slot.image.get() {
            return Ok(made.clone());
        }
        if !job.slot.started.swap(true, Ordering::Relaxed) {
            self.threads.spawn(async move {
                if let Err(e) = job.run().await {
                    tracing::warn!(snapshot = %job.id, error = %e, "no image this time; the next restore tries again");
                }
            });
        }
        Ok(None)
    }

    /// Makes snapshot `id`'s pre-initialised image now, or waits for the one being made: true
    /// when the snapshot has an image (restores then instantiate it), false when images are off
    /// or the component cannot be pre-initialised. Making one replays the journal and compiles
    /// the instance's state as a component: milliseconds to seconds, as compiling the
    /// environment.
    ///
    /// # Errors
    /// [`SnapshotError::Unknown`]; [`SnapshotError::Image`] when the journal does not replay
    /// or the image does not compile.
    pub async fn prepare_image(&self, id: &str) -> Result<bool, SnapshotError> {
        let snapshot = self.snapshot_for(id)?;
        let Some(job) = self.image_job(id, &snapshot)? else {
            return Ok(false);
        };
        job.slot.started.store(true, Ordering::Relaxed);
        Ok(job.run().await?.is_some())
    }

    fn snapshot_for(&self, id: &str) -> Result<Arc<Snapshot>, SnapshotError> {
        self.snapshots
            .get(id)
            .ok_or_else(|| SnapshotError::Unknown(id.to_owned()))
    }

    /// What making the image of `snapshot` (kept as `id`) needs; `None` when images are off.
    fn image_job(
        &self,
        id: &str,
        snapshot: &Arc<Snapshot>,
    ) -> Result<Option<ImageJob>, SnapshotError> {
        let environment = self.catalog_for(snapshot)?.environment.clone();
        Ok(self.images.slot(id).map(|slot| ImageJob {
            id: id.to_owned(),
            snapshot: snapshot.clone(),
            environment,
            metrics: self.metrics.clone(),
            slot,
        }))
    }

    /// Snapshots `episode` and restores the snapshot into a new episode: answers the snapshot's
    /// id and the new episode, which goes on from the same state independently.
    ///
    /// # Errors
    /// As [`Host::snapshot`] and [`Host::restore`].
    pub async fn fork(&self, episode: &Episode) -> Result<(String, Arc<Episode>), SnapshotError> {
        let snapshot = Arc::new(self.take_snapshot(episode).await?);
        let fork = self.restore_snapshot(&snapshot).await?;
        let id = self
            .snapshots
            .insert(Arc::unwrap_or_clone(snapshot))
            .ok_or(SnapshotError::Full)?;
        Ok((id, fork))
    }

    /// A new episode from `snapshot` by replaying its journal.
    async fn restore_snapshot(&self, snapshot: &Snapshot) -> Result<Arc<Episode>, SnapshotError> {
        self.restore_with(
            snapshot,
            RestoreSource::Replay,
            |environment, id, threads| {
                Runner::restore(
                    environment,
                    id,
                    threads,
                    snapshot.seed,
                    snapshot.journal.clone(),
                )
            },
        )
        .await
    }

    /// A new episode of `snapshot`'s environment made by `make` (from `source`), within the
    /// episode cap, with the snapshot's tool-access rules.
    async fn restore_with<'a, F, Fut>(
        &'a self,
        snapshot: &Snapshot,
        source: RestoreSource,
        make: F,
    ) -> Result<Arc<Episode>, SnapshotError>
    where
        F: FnOnce(Arc<Environment>, String, &'a GuestThreads) -> Fut,
        Fut: Future<Output = Result<Runner, CallError>>,
    {
        let catalog = self.catalog_for(snapshot)?.clone();
        let episode = self
            .admit(catalog, make)
            .await
            .map_err(SnapshotError::Restore)?;
        episode.set_tool_access(snapshot.tool_access.clone());
        self.metrics.restored(source);
        Ok(episode)
    }

    fn catalog_for(&self, snapshot: &Snapshot) -> Result<&Arc<Catalog>, SnapshotError> {
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
