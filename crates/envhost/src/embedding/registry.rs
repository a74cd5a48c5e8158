//! The episodes alive, by id, under the host's cap on their number: one [`Registry`] per kind
//! of episode (environments', computers'), all drawing on one [`Cap`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::ids::{IdMap, key};

/// The host's cap on episodes of every kind, alive or being created.
pub struct Cap {
    /// Episodes alive or being created: never above `max`.
    count: AtomicUsize,
    max: usize,
}

impl Cap {
    /// A cap of `max` episodes, shared by the registries made with it.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            count: AtomicUsize::new(0),
            max,
        })
    }
}

/// The episodes of one kind alive.
pub struct Registry<T> {
    episodes: RwLock<IdMap<Arc<T>>>,
    cap: Arc<Cap>,
}

/// A place reserved for an episode being created; released if dropped unfilled.
pub struct Slot<'a, T> {
    registry: Option<&'a Registry<T>>,
}

impl<T> Slot<'_, T> {
    /// Registers `episode`, whose id has the key `key` ([`crate::ids::fresh`]), in the
    /// reserved place; answers the episodes of its kind alive.
    pub fn fill(mut self, key: u128, episode: Arc<T>) -> usize {
        let Some(registry) = self.registry.take() else {
            return 0;
        };
        let mut episodes = registry.write();
        episodes.insert(key, episode);
        episodes.len()
    }
}

impl<T> Drop for Slot<'_, T> {
    fn drop(&mut self) {
        if let Some(registry) = self.registry {
            registry.cap.count.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl<T> Registry<T> {
    /// A registry whose episodes count against `cap`.
    pub fn new(cap: Arc<Cap>) -> Self {
        Self {
            episodes: RwLock::new(IdMap::default()),
            cap,
        }
    }

    /// The cap: the most episodes of every kind alive at once.
    pub fn max(&self) -> usize {
        self.cap.max
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, IdMap<Arc<T>>> {
        self.episodes
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, IdMap<Arc<T>>> {
        self.episodes.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserves a place for one more episode; none at the cap.
    pub fn reserve(&self) -> Option<Slot<'_, T>> {
        self.cap
            .count
            .try_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.cap.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot {
                registry: Some(self),
            })
    }

    /// The episode `id`.
    pub fn get(&self, id: &str) -> Option<Arc<T>> {
        self.read().get(&key(id)?).cloned()
    }

    /// The keys of every episode.
    pub fn keys(&self) -> rustc_hash::FxHashSet<u128> {
        self.read().keys().copied().collect()
    }

    /// Every episode.
    pub fn all(&self) -> Vec<Arc<T>> {
        self.read().values().cloned().collect()
    }

    /// Removes episode `id`; answers the episodes of its kind left, or none when it was not
    /// there.
    pub fn remove(&self, id: &str) -> Option<usize> {
        let mut episodes = self.write();
        let removed = episodes.remove(&key(id)?)?;
        let left = episodes.len();
        drop(episodes);
        drop(removed);
        self.cap.count.fetch_sub(1, Ordering::AcqRel);
        Some(left)
    }

    /// Removes the episodes `doomed` picks; answers how many, and how many of their kind are
    /// left.
    pub fn remove_where(&self, doomed: impl Fn(&T) -> bool) -> (usize, usize) {
        let mut episodes = self.write();
        let removed: Vec<_> = episodes.extract_if(|_, e| doomed(e)).collect();
        let left = episodes.len();
        drop(episodes);
        let count = removed.len();
        drop(removed);
        self.cap.count.fetch_sub(count, Ordering::AcqRel);
        (count, left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids;

    #[test]
    fn registries_of_one_cap_share_it() {
        let cap = Cap::new(2);
        let episodes: Registry<u8> = Registry::new(cap.clone());
        let computers: Registry<u16> = Registry::new(cap);
        let (key, id) = ids::fresh();
        assert_eq!(episodes.reserve().unwrap().fill(key, Arc::new(1)), 1);
        let reserved = computers.reserve().unwrap();
        assert!(episodes.reserve().is_none(), "a reserved place counts");
        drop(reserved);
        let (other, _) = ids::fresh();
        assert_eq!(computers.reserve().unwrap().fill(other, Arc::new(2)), 1);
        assert!(episodes.reserve().is_none() && computers.reserve().is_none());
        assert_eq!(episodes.remove(&id), Some(0));
        assert_eq!(episodes.remove(&id), None);
        assert!(computers.reserve().is_some());
        assert_eq!(computers.all().len(), 1);
    }
}
