//! `envhost serve ... --agent NAME=PATH.wasm`: agents served at `/agents/NAME/invoke`, bound to
//! the first environment, with the model endpoint and the session store the options name
//! (docs/agents.md#serving).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use envhost::agent::model::ModelEndpoint;
use envhost::agent::sessions::Sessions;
use envhost::runtime::Limits;
use envhost::runtime::agent::Agent;
use envhost::server::agents::{self, Agents, ServedAgent};
use envhost::{Episode, Host};

use crate::config::FileAgent;

/// The agent options of `envhost serve`.
pub struct AgentOptions {
    /// `NAME=PATH.wasm` each, bound to the first environment.
    pub agents: Vec<String>,
    /// The configuration file's `[agents.NAME]` tables.
    pub tables: BTreeMap<String, FileAgent>,
    /// The model endpoint's URL.
    pub model_url: Option<String>,
    /// The model's name at the endpoint.
    pub model: String,
    /// Where session histories are kept; in memory when none.
    pub sessions_dir: Option<PathBuf>,
    /// Seconds between a quiet stream's pings.
    pub heartbeat_s: u64,
}

/// The routes of the agents `options` name (the command line's bound to `root`'s environment);
/// none without agents.
///
/// # Errors
/// An agent that is not `NAME=PATH`, cannot be read, is not an agent or names an environment
/// the host does not serve; a session directory that cannot be made.
pub async fn router(
    options: AgentOptions,
    host: Arc<Host>,
    root: Arc<Episode>,
) -> anyhow::Result<Option<Router>> {
    if options.agents.is_empty() && options.tables.is_empty() {
        return Ok(None);
    }
    let first = root.catalog().name.clone();
    let mut wanted: Vec<(String, PathBuf, String, String)> = Vec::new();
    for spec in &options.agents {
        let (name, path) = spec
            .split_once('=')
            .filter(|(name, _)| !name.is_empty())
            .with_context(|| format!("an agent is NAME=PATH.wasm, got {spec:?}"))?;
        wanted.push((
            name.into(),
            path.into(),
            first.clone(),
            options.model.clone(),
        ));
    }
    for (name, table) in &options.tables {
        let environment = table.environment.clone().unwrap_or_else(|| first.clone());
        anyhow::ensure!(
            host.environments().iter().any(|e| e.name == environment),
            "the agent {name} is bound to {environment:?}, which this host does not serve"
        );
        let model = table.model.clone().unwrap_or_else(|| options.model.clone());
        wanted.push((name.clone(), table.component.clone(), environment, model));
    }
    let mut served = HashMap::new();
    for (name, path, environment, model_name) in wanted {
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let agent = Agent::from_bytes(host.runtime(), bytes, Limits::default())
            .await
            .with_context(|| format!("loading the agent {name} from {}", path.display()))?;
        let agent = ServedAgent {
            agent: Arc::new(agent),
            environment,
            model_name,
        };
        anyhow::ensure!(
            served.insert(name.clone(), agent).is_none(),
            "two agents are named {name}"
        );
    }
    let sessions = match &options.sessions_dir {
        Some(dir) => Sessions::in_dir(dir).context("the sessions directory")?,
        None => Sessions::in_memory(),
    };
    let model = ModelEndpoint::from_env(options.model_url.clone())
        .map_err(|e| anyhow::anyhow!("the model endpoint: {e}"))?;
    if model.is_none() {
        tracing::warn!(
            "no model endpoint (--model-url, OPENAI_BASE_URL or LITELLM_BASE_URL): every model call of an agent fails"
        );
    }
    let names: Vec<&String> = served.keys().collect();
    tracing::info!(agents = ?names, "serving agents at /agents/NAME/invoke");
    Ok(Some(agents::router(Agents {
        agents: served,
        host,
        root,
        sessions,
        model,
        heartbeat: Duration::from_secs(options.heartbeat_s.max(1)),
    })))
}
