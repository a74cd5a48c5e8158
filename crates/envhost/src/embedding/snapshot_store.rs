//! Where a host keeps its snapshots, by id, and the pre-initialised images of those restored.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

use envhost_runtime::{Image, Snapshot};
use lru::LruCache;
use tokio::sync::OnceCell;

/// The most snapshots a host keeps at once.
pub const MAX_SNAPSHOTS: usize = 10_000;

/// The snapshots a host keeps, by id.
#[derive(Default)]
pub(super) struct Snapshots {
    stored: Mutex<HashMap<String, Arc<Snapshot>>>,
}

impl Snapshots {
    /// Keeps `snapshot` under a fresh id; `None` when [`MAX_SNAPSHOTS`] are kept.
    pub(super) fn insert(&self, snapshot: Snapshot) -> Option<String> {
        let mut stored = self.stored.lock().unwrap_or_else(PoisonError::into_inner);
        if stored.len() >= MAX_SNAPSHOTS {
            return None;
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        stored.insert(id.clone(), Arc::new(snapshot));
        Some(id)
    }

    /// Snapshot `id`.
    pub(super) fn get(&self, id: &str) -> Option<Arc<Snapshot>> {
        self.stored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Forgets snapshot `id`; false when there is none.
    pub(super) fn remove(&self, id: &str) -> bool {
        self.stored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .is_some()
    }

    /// The ids kept.
    pub(super) fn ids(&self) -> Vec<String> {
        self.stored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }
}

/// A snapshot's image: made once (by a background task the first restore starts, or by
/// `Host::prepare_image`); `None` when the component cannot be pre-initialised.
#[derive(Default)]
pub(super) struct ImageSlot {
    /// The image, once made.
    pub(super) image: OnceCell<Option<Arc<Image>>>,
    /// Whether a background task is making the image, or has.
    pub(super) started: AtomicBool,
}

/// The images of restored snapshots, by snapshot id; the least recently restored is dropped
/// first.
pub(super) struct Images {
    slots: Option<Mutex<LruCache<String, Arc<ImageSlot>>>>,
}

impl Images {
    /// Room for `capacity` images; none keeps no image (every restore replays).
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            slots: NonZeroUsize::new(capacity).map(|c| Mutex::new(LruCache::new(c))),
        }
    }

    /// Snapshot `id`'s slot, made if need be; `None` when images are off.
    pub(super) fn slot(&self, id: &str) -> Option<Arc<ImageSlot>> {
        let mut slots = self
            .slots
            .as_ref()?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Some(slots.get_or_insert(id.to_owned(), Default::default).clone())
    }

    /// Drops snapshot `id`'s image.
    pub(super) fn remove(&self, id: &str) {
        if let Some(slots) = &self.slots {
            slots.lock().unwrap_or_else(PoisonError::into_inner).pop(id);
        }
    }
}
