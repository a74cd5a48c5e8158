//! The deployments of a host's agents (docs/agent-env.md#deployments): each one an agentenv A2A
//! agent with its own base URL `/deployments/{id}/{secret}`, its own agent-config, MCP servers
//! and tasks. Deployments live until deleted.

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::{Map, Value};

use super::settings::Settings;
use super::tasks::Tasks;
use super::tools::McpServer;
use crate::ids::{self, IdMap, Secret};

/// The first segment of every deployment's base URL.
pub const DEPLOYMENT_PREFIX: &str = "/deployments";

/// The most deployments one host holds (503 `too_many_deployments` beyond it).
pub const MAX_DEPLOYMENTS: usize = 100_000;

/// One deployment of an agent.
pub struct Deployment {
    id: String,
    secret: Secret,
    agent: String,
    /// Its agent-config/v1 values.
    pub settings: Mutex<Settings>,
    /// Its mcp-config/v1 servers, in the order added.
    pub servers: Mutex<Vec<McpServer>>,
    /// Its tasks.
    pub tasks: Mutex<Tasks>,
}

/// Locks `mutex`, whatever a panicking holder left (every update is a whole assignment).
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Deployment {
    /// Its id: 32 lowercase hex digits.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The agent it deploys.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Whether `presented` is its secret (constant time).
    pub fn admits(&self, presented: &str) -> bool {
        self.secret.matches(presented)
    }

    /// Its base URL's path: `/deployments/{id}/{secret}` (no trailing slash).
    pub fn base_path(&self) -> String {
        format!("{DEPLOYMENT_PREFIX}/{}/{}", self.id, self.secret.to_hex())
    }

    /// `{"id", "agent", "tasks", "running"}`: what the control routes show of it.
    pub fn summary(&self) -> Map<String, Value> {
        let (tasks, running) = {
            let tasks = lock(&self.tasks);
            (tasks.len(), tasks.running())
        };
        let mut fields = Map::new();
        fields.insert("id".into(), self.id.clone().into());
        fields.insert("agent".into(), self.agent.clone().into());
        fields.insert("tasks".into(), tasks.into());
        fields.insert("running".into(), running.into());
        fields
    }
}

/// The deployments of one server.
#[derive(Default)]
pub struct Deployments {
    by_id: RwLock<IdMap<Arc<Deployment>>>,
}

/// Why a deployment could not be made.
#[derive(Debug, thiserror::Error)]
#[error("the host holds its maximum of {MAX_DEPLOYMENTS} deployments; delete one first")]
pub struct TooMany;

impl Deployments {
    /// A new deployment of `agent` (whose existence the caller checked).
    ///
    /// # Errors
    /// [`TooMany`] at [`MAX_DEPLOYMENTS`].
    pub fn create(&self, agent: &str) -> Result<Arc<Deployment>, TooMany> {
        let (key, id) = ids::fresh();
        let deployment = Arc::new(Deployment {
            id,
            secret: Secret::fresh(),
            agent: agent.to_owned(),
            settings: Mutex::new(Settings::default()),
            servers: Mutex::new(Vec::new()),
            tasks: Mutex::new(Tasks::default()),
        });
        let mut by_id = self.by_id.write().unwrap_or_else(PoisonError::into_inner);
        if by_id.len() >= MAX_DEPLOYMENTS {
            return Err(TooMany);
        }
        by_id.insert(key, deployment.clone());
        Ok(deployment)
    }

    /// The deployment `id`.
    pub fn get(&self, id: &str) -> Option<Arc<Deployment>> {
        let key = ids::key(id)?;
        let by_id = self.by_id.read().unwrap_or_else(PoisonError::into_inner);
        by_id.get(&key).cloned()
    }

    /// Every deployment, sorted by id.
    pub fn list(&self) -> Vec<Arc<Deployment>> {
        let by_id = self.by_id.read().unwrap_or_else(PoisonError::into_inner);
        let mut all: Vec<_> = by_id.values().cloned().collect();
        all.sort_by(|a, b| a.id.cmp(&b.id));
        all
    }

    /// Removes deployment `id`, stopping its running tasks; whether there was one.
    pub fn delete(&self, id: &str) -> bool {
        let Some(key) = ids::key(id) else {
            return false;
        };
        let removed = self
            .by_id
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        if let Some(deployment) = &removed {
            lock(&deployment.tasks).stop_all();
        }
        removed.is_some()
    }
}
