//! `envhost serve ... --agent NAME=PATH.wasm`: agents served at `/agents/NAME/invoke`, bound to
//! the first environment, with the model endpoint and the session store the options name
//! (docs/agents.md#serving).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::agent::model::ModelEndpoint;
use crate::{AgentConfig, HostConfig};
use anyhow::Context as _;

use super::config::FileAgent;

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
}

/// Adds the agents `options` name to `config` (the command line's bound to its first
/// environment), with the model endpoint and the sessions' directory.
///
/// # Errors
/// An agent that is not `NAME=PATH`; a model endpoint whose client cannot be made.
pub fn configure(options: AgentOptions, config: &mut HostConfig) -> anyhow::Result<()> {
    if options.agents.is_empty() && options.tables.is_empty() {
        return Ok(());
    }
    let first = config
        .environments
        .first()
        .map(|e| e.name.clone())
        .unwrap_or_default();
    for spec in &options.agents {
        let (name, path) = spec
            .split_once('=')
            .filter(|(name, _)| !name.is_empty())
            .with_context(|| format!("an agent is NAME=PATH.wasm, got {spec:?}"))?;
        let mut agent = AgentConfig::new(name, path, first.clone());
        agent.model.clone_from(&options.model);
        config.agents.push(agent);
    }
    for (name, table) in options.tables {
        let environment = table.environment.unwrap_or_else(|| first.clone());
        let mut agent = AgentConfig::new(name, table.component, environment);
        agent.model = table.model.unwrap_or_else(|| options.model.clone());
        config.agents.push(agent);
    }
    config.model = ModelEndpoint::from_env(options.model_url)
        .map_err(|e| anyhow::anyhow!("the model endpoint: {e}"))?;
    if config.model.is_none() {
        tracing::warn!(
            "no model endpoint (--model-url, OPENAI_BASE_URL or LITELLM_BASE_URL): every model call of an agent fails"
        );
    }
    config.sessions_dir = options.sessions_dir;
    Ok(())
}
