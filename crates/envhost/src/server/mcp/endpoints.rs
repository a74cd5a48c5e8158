//! The MCP endpoints of a server's episodes: each environment's [`Listing`], made when the server
//! starts, and each episode's [`Sessions`], made at its first `initialize` and forgotten with the
//! episode.

use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use super::listing::Listing;
use super::sessions::Sessions;
use crate::embedding::{Catalog, Episode, Host};
use crate::ids::IdMap;

/// How often the sessions of episodes dropped without the server (by an embedder, say) are
/// looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// Each environment's listing and each episode's sessions.
pub struct Endpoints {
    /// By environment, in the host's order.
    listings: Vec<(Arc<Catalog>, Listing)>,
    /// By episode key.
    sessions: RwLock<IdMap<Arc<Sessions>>>,
    last_sweep: Mutex<Instant>,
}

impl Endpoints {
    /// The endpoints of `host`'s episodes, none with sessions yet.
    ///
    /// # Errors
    /// serde_json's, should a tool's listing not encode.
    pub fn new(host: &Host) -> serde_json::Result<Self> {
        let listings = host
            .environments()
            .iter()
            .map(|catalog| Ok((catalog.clone(), Listing::new(catalog)?)))
            .collect::<serde_json::Result<_>>()?;
        Ok(Self {
            listings,
            sessions: RwLock::default(),
            last_sweep: Mutex::new(Instant::now()),
        })
    }

    /// The listing of `episode`'s environment.
    pub fn listing(&self, episode: &Episode) -> Option<&Listing> {
        self.listings
            .iter()
            .find(|(catalog, _)| Arc::ptr_eq(catalog, episode.catalog()))
            .map(|(_, listing)| listing)
    }

    /// `episode`'s sessions, when one was ever opened.
    pub fn sessions(&self, episode: &Episode) -> Option<Arc<Sessions>> {
        self.read().get(&episode.key()).cloned()
    }

    /// `episode`'s sessions, made if need be (to open one).
    pub fn sessions_or_default(&self, episode: &Episode) -> Arc<Sessions> {
        if let Some(sessions) = self.sessions(episode) {
            return sessions;
        }
        let mut table = self
            .sessions
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        table.entry(episode.key()).or_default().clone()
    }

    /// Forgets the sessions of `episode`, which was dropped.
    pub fn forget(&self, episode: &Episode) {
        self.sessions
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&episode.key());
    }

    /// Forgets the sessions of episodes `host` no longer has (evicted, or dropped in-process);
    /// at most every [`SWEEP_EVERY`] unless `now` is true.
    pub fn sweep(&self, host: &Host, now: bool) {
        {
            let mut last = self
                .last_sweep
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if !now && last.elapsed() < SWEEP_EVERY {
                return;
            }
            *last = Instant::now();
        }
        let alive = host.episode_keys();
        self.sessions
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|key, _| alive.contains(key));
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, IdMap<Arc<Sessions>>> {
        self.sessions.read().unwrap_or_else(PoisonError::into_inner)
    }
}
