//! The episodes alive, by id, with the process-wide cap on their number.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use super::episode::Episode;
use crate::ids::{IdMap, key};

/// The episodes alive.
pub struct Registry {
    episodes: RwLock<IdMap<Arc<Episode>>>,
    /// Episodes alive or being created: never above `max`.
    count: AtomicUsize,
    max: usize,
}

/// A place reserved for an episode being created; released if dropped unfilled.
pub struct Slot<'a> {
    registry: Option<&'a Registry>,
}

impl Slot<'_> {
    /// Registers `episode`, whose id has the key `key` ([`crate::ids::fresh`]), in the
    /// reserved place; answers the episodes alive.
    pub fn fill(mut self, key: u128, episode: Arc<Episode>) -> usize {
        let Some(registry) = self.registry.take() else {
            return 0;
        };
        registry.write().insert(key, episode);
        registry.count.load(Ordering::Acquire)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Some(registry) = self.registry {
            registry.count.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Registry {
    /// A registry of at most `max` episodes.
    pub fn new(max: usize) -> Self {
        Self {
            episodes: RwLock::new(IdMap::default()),
            count: AtomicUsize::new(0),
            max,
        }
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.max
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, IdMap<Arc<Episode>>> {
        self.episodes
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, IdMap<Arc<Episode>>> {
        self.episodes.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserves a place for one more episode; none at the cap.
    pub fn reserve(&self) -> Option<Slot<'_>> {
        self.count
            .try_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot {
                registry: Some(self),
            })
    }

    /// The episode `id`.
    pub fn get(&self, id: &str) -> Option<Arc<Episode>> {
        self.read().get(&key(id)?).cloned()
    }

    /// The keys of every episode.
    pub fn keys(&self) -> rustc_hash::FxHashSet<u128> {
        self.read().keys().copied().collect()
    }

    /// Every episode.
    pub fn all(&self) -> Vec<Arc<Episode>> {
        self.read().values().cloned().collect()
    }

    /// Removes episode `id`; answers the episodes left, or none when it was not there.
    pub fn remove(&self, id: &str) -> Option<usize> {
        let removed = self.write().remove(&key(id)?)?;
        drop(removed);
        Some(self.count.fetch_sub(1, Ordering::AcqRel) - 1)
    }

    /// Removes the episodes `doomed` picks; answers how many, and how many are left.
    pub fn remove_where(&self, doomed: impl Fn(&Episode) -> bool) -> (usize, usize) {
        let removed: Vec<_> = self.write().extract_if(|_, e| doomed(e)).collect();
        let count = removed.len();
        drop(removed);
        let left = self.count.fetch_sub(count, Ordering::AcqRel) - count;
        (count, left)
    }
}
