//! A host's agents (docs/agents.md#in-process): loaded with the host, each bound to one of its
//! environments, their turns started by [`Host::invoke`].

use std::collections::HashMap;
use std::sync::Arc;

use envhost_runtime::Runtime;
use envhost_runtime::agent::Agent;
use tokio::sync::Semaphore;

use super::config::HostConfig;
use super::host::{Host, HostError};
use crate::agent::model::{Message, ModelEndpoint};
use crate::agent::sessions::{SessionError, Sessions};
use crate::agent::turn::{self, TurnSetup};
use crate::agent::{AgentEvent, AgentEvents, Prompt, Scope, Toolbox};
use envhost_protocol::Caller;

/// One loaded agent.
pub(super) struct Bound {
    agent: Arc<Agent>,
    environment: String,
    model: String,
}

/// The agents of a host and what their turns share.
pub(super) struct Agents {
    by_name: HashMap<String, Bound>,
    sessions: Arc<Sessions>,
    model: Option<ModelEndpoint>,
    /// A permit per turn running, [`HostConfig::max_turns`] in all.
    turns: Arc<Semaphore>,
    max_turns: usize,
}

/// Why a turn could not start ([`Host::invoke`]). Over HTTP: 404 `agent_not_found`, 404
/// `episode_not_found`, 400 `invalid_params`.
#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    /// No agent has that name.
    #[error("no agent {0:?}")]
    UnknownAgent(String),
    /// The scope names no episode.
    #[error("name an episode of {0} in the scope")]
    NoEpisode(String),
    /// The scope's episode is not a live episode of the agent's environment.
    #[error("no episode {episode} of {environment}")]
    EpisodeNotFound {
        /// The episode named.
        episode: String,
        /// The agent's environment.
        environment: String,
    },
}

impl InvokeError {
    /// Its code over HTTP.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownAgent(_) => "agent_not_found",
            Self::NoEpisode(_) => "invalid_params",
            Self::EpisodeNotFound { .. } => "episode_not_found",
        }
    }
}

impl Agents {
    /// Loads `config`'s agents with `runtime`, checking that each environment is among
    /// `environments`.
    pub(super) async fn load(
        runtime: &Runtime,
        config: &HostConfig,
        environments: &[&str],
    ) -> Result<Self, HostError> {
        let mut by_name = HashMap::new();
        for agent in &config.agents {
            let failed = |why: String| HostError::Agent {
                name: agent.name.clone(),
                why,
            };
            if !environments.contains(&agent.environment.as_str()) {
                return Err(failed(format!(
                    "bound to {:?}, which this host does not serve",
                    agent.environment
                )));
            }
            if by_name.contains_key(&agent.name) {
                return Err(failed("two agents have this name".into()));
            }
            let bytes = std::fs::read(&agent.component)
                .map_err(|e| failed(format!("reading {}: {e}", agent.component.display())))?;
            let loaded = Agent::from_bytes(runtime, bytes, agent.limits)
                .await
                .map_err(|why| HostError::AgentLoad {
                    name: agent.name.clone(),
                    component: agent.component.clone(),
                    why,
                })?;
            tracing::info!(agent = %agent.name, environment = %agent.environment, "loaded");
            by_name.insert(
                agent.name.clone(),
                Bound {
                    agent: Arc::new(loaded),
                    environment: agent.environment.clone(),
                    model: agent.model.clone(),
                },
            );
        }
        let sessions = match &config.sessions_dir {
            Some(dir) => Sessions::in_dir(dir).map_err(|e| HostError::Sessions(e.to_string()))?,
            None => Sessions::in_memory(),
        };
        Ok(Self {
            by_name,
            sessions,
            model: config.model.clone(),
            turns: Arc::new(Semaphore::new(config.max_turns)),
            max_turns: config.max_turns,
        })
    }
}

impl Host {
    /// The agents' names, sorted.
    pub fn agent_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.agents.by_name.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// The environment the agent `name` is bound to.
    pub fn agent_environment(&self, name: &str) -> Option<&str> {
        self.agents
            .by_name
            .get(name)
            .map(|b| b.environment.as_str())
    }

    /// Starts a turn of the agent `agent` in `scope`'s session, acting on `scope.episode`
    /// (docs/agents.md#turns). The turn runs on its own task; its events arrive in order and
    /// end with exactly one terminal. A session with a turn running answers exactly
    /// `failed{code: "session_busy", retryable: true}`, a host running
    /// [`HostConfig::max_turns`] turns `failed{code: "host_busy", retryable: true}`. Dropping
    /// the events cancels the turn.
    /// Call from within a tokio runtime.
    ///
    /// # Errors
    /// [`InvokeError`] when the agent or the episode does not exist; nothing is started.
    pub fn invoke(
        &self,
        agent: &str,
        scope: Scope,
        prompt: Prompt,
    ) -> Result<AgentEvents, InvokeError> {
        let bound = self.bound_agent(agent)?;
        let id = scope
            .episode
            .as_deref()
            .ok_or_else(|| InvokeError::NoEpisode(bound.environment.clone()))?;
        let episode = self
            .episode(id)
            .filter(|e| e.catalog().name == bound.environment)
            .ok_or_else(|| InvokeError::EpisodeNotFound {
                episode: id.to_owned(),
                environment: bound.environment.clone(),
            })?;
        let caller = Caller {
            role: None,
            session: Some(scope.session.clone()),
        };
        let tools = Toolbox::episode(episode, caller);
        Ok(self.start_turn(bound, scope, prompt, TurnOptions::default(), tools))
    }

    /// The agent `agent` as served.
    fn bound_agent(&self, agent: &str) -> Result<&Bound, InvokeError> {
        self.agents
            .by_name
            .get(agent)
            .ok_or_else(|| InvokeError::UnknownAgent(agent.to_owned()))
    }

    /// Starts a turn of the agent `agent` as [`Host::invoke`] does, with `tools` instead of
    /// its environment's episode and `options` over its defaults (what an A2A deployment of
    /// the agent runs, docs/agent-env.md). `scope.episode` is not read.
    ///
    /// # Errors
    /// [`InvokeError::UnknownAgent`] when there is no agent `agent`; nothing is started.
    pub fn invoke_with(
        &self,
        agent: &str,
        scope: Scope,
        prompt: Prompt,
        options: TurnOptions,
        tools: Toolbox,
    ) -> Result<AgentEvents, InvokeError> {
        let bound = self.bound_agent(agent)?;
        Ok(self.start_turn(bound, scope, prompt, options, tools))
    }

    /// A turn of `bound` with `tools` and `options`, or `failed{host_busy}` at
    /// [`HostConfig::max_turns`].
    fn start_turn(
        &self,
        bound: &Bound,
        scope: Scope,
        prompt: Prompt,
        options: TurnOptions,
        tools: Toolbox,
    ) -> AgentEvents {
        let Ok(permit) = self.agents.turns.clone().try_acquire_owned() else {
            return AgentEvents::one(AgentEvent::failed(
                "host_busy",
                format!(
                    "the host runs its maximum of {} turns; try again",
                    self.agents.max_turns
                ),
                true,
            ));
        };
        let setup = TurnSetup {
            agent: bound.agent.clone(),
            tools,
            sessions: self.agents.sessions.clone(),
            model: self.agents.model.clone(),
            model_name: options.model.unwrap_or_else(|| bound.model.clone()),
            system_prompt: options.system_prompt,
            max_completions: options.max_completions,
        };
        turn::invoke(setup, scope.to_wit(), prompt.into_wit(), Some(permit))
    }

    /// The history of session `session`, oldest first (docs/agents.md#sessions).
    ///
    /// # Errors
    /// [`SessionError`] for a bad id or a store that cannot be read.
    pub async fn session_history(&self, session: &str) -> Result<Vec<Message>, SessionError> {
        self.agents.sessions.history(session).await
    }

    /// Adds `entries` at the end of session `session`'s history.
    ///
    /// # Errors
    /// [`SessionError`] for a bad id or a store that cannot be written.
    pub async fn append_session(
        &self,
        session: &str,
        entries: &[Message],
    ) -> Result<(), SessionError> {
        self.agents.sessions.append(session, entries).await
    }

    /// The HTTP client a turn's remote MCP servers are reached with: the egress policy on
    /// every connection and redirect (serve.md#egress-policy).
    pub fn egress_client(&self) -> reqwest::Client {
        self.resolver.http().clone()
    }
}

/// What a turn started by [`Host::invoke_with`] changes from its agent's defaults.
#[derive(Clone, Debug, Default)]
pub struct TurnOptions {
    /// The model's name at the endpoint instead of the agent's.
    pub model: Option<String>,
    /// The system message of every model request instead of the guest's.
    pub system_prompt: Option<String>,
    /// The most model completions the turn may ask for (one more fails it, code `max_turns`).
    pub max_completions: Option<u32>,
}
