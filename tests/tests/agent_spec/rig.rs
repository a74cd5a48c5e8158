//! What the checks run on: a host serving slack with one agent bound to a seeded episode, a Chat
//! Completions server on loopback as its model, and the same agent served over HTTP on
//! loopback; a [`Subject`] is an example agent put in the postures the spec's checks need.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use envhost::agent::model::ModelEndpoint;
use envhost::agent::{AgentEvent, AgentEvents, AgentFailure, Collected, Prompt, Scope};
use envhost::protocol::Part;
use envhost::{AgentConfig, EnvironmentConfig, Episode, Host, HostConfig, server};
use envhost_tests::guest;
use envhost_tests::model::{Answer, Model, serve};
use futures::FutureExt as _;
use serde_json::{Value, json};

/// The agent's name in every rig's host.
pub const AGENT: &str = "subject";

/// The longest a turn may wait for an event before a check gives up on it.
const PATIENCE: Duration = Duration::from_secs(20);

/// An example agent under the spec's checks: its component, bound to slack in each rig.
pub struct Subject {
    component: PathBuf,
}

impl Subject {
    /// The guest component `name` (`guests/target/wasm32-wasip2/release/<name>.wasm`).
    pub fn new(name: &str) -> Self {
        let component = guest(name);
        assert!(
            component.exists(),
            "{} is missing: build it (make guests)",
            component.display()
        );
        Self { component }
    }

    /// The subject's configuration, asking the model `scripted`.
    pub fn agent(&self) -> AgentConfig {
        let mut agent = AgentConfig::new(AGENT, &self.component, "slack");
        agent.model = "scripted".into();
        agent
    }

    /// The subject with the model answering `answers` in turn.
    pub async fn with_model(&self, answers: Vec<Answer>) -> Rig {
        Rig::start(self.agent(), answers).await
    }

    /// The subject in a turn that succeeds: the model answers text, `Hel` then `lo`.
    pub async fn completing(&self) -> Rig {
        self.with_model(vec![hello(), hello()]).await
    }

    /// The subject in a turn that fails inside it: the model answers HTTP `status`.
    pub async fn failing(&self, status: u16) -> Rig {
        self.with_model(vec![Answer::Status(status)]).await
    }

    /// The subject in a turn that never ends: the model streams the text `One`, then nothing
    /// until its request is closed; the next turn's model call never answers at all.
    pub async fn hanging(&self) -> Rig {
        self.with_model(vec![
            Answer::HangAfter(vec![json!({"content": "One"})]),
            Answer::Hang,
        ])
        .await
    }
}

/// A model answer of text, in two deltas: `Hel`, `lo`.
pub fn hello() -> Answer {
    Answer::Stream(vec![json!({"content": "Hel"}), json!({"content": "lo"})])
}

/// A directory of its own under the system's temporary directory, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh directory named after `name` and this process.
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("envhost-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating a temporary directory");
        Self(dir)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A host serving slack and one agent, [`AGENT`], bound to it; a seeded episode (a channel
/// `general`); the model the agent asks.
pub struct Rig {
    /// The host.
    pub host: Arc<Host>,
    /// The episode the agent acts on.
    pub episode: Arc<Episode>,
    /// The model's requests and hanging answers.
    pub model: Arc<Model>,
}

impl Rig {
    /// `agent` with a model answering `answers`, sessions in memory.
    pub async fn start(agent: AgentConfig, answers: Vec<Answer>) -> Self {
        let (url, model) = serve(answers).await;
        Self::on_model(agent, &url, model, None).await
    }

    /// `agent` asking the model at `url`, sessions kept in `sessions_dir` when given.
    pub async fn on_model(
        agent: AgentConfig,
        url: &str,
        model: Arc<Model>,
        sessions_dir: Option<&Path>,
    ) -> Self {
        let mut config = HostConfig::new(vec![EnvironmentConfig::new("slack", guest("slack"))]);
        config.max_episodes = 4;
        config.agents.push(agent);
        config.model = Some(ModelEndpoint::new(url, None).expect("a model URL"));
        config.sessions_dir = sessions_dir.map(Path::to_path_buf);
        let host = Arc::new(Host::new(config).await.expect("a host"));
        let episode = host.create_episode("slack").await.expect("an episode");
        let seed = json!({"channels": [{"name": "general", "topic": ""}], "messages": []});
        let part: Part = serde_json::from_value(json!({"kind": "data", "data": seed})).unwrap();
        episode.add_data(vec![part]).await.expect("seeding");
        Self {
            host,
            episode,
            model,
        }
    }

    /// Starts a turn of `session` with `text`.
    pub fn invoke(&self, session: &str, text: &str) -> AgentEvents {
        let scope = Scope::new(session, self.episode.id());
        self.host
            .invoke(AGENT, scope, Prompt::text(text))
            .expect("the agent and the episode exist")
    }

    /// A turn of `session` with `text`, read to its end: its events as JSON.
    pub async fn drain(&self, session: &str, text: &str) -> Vec<Value> {
        drain(self.invoke(session, text)).await
    }

    /// A turn of `session` with `text`, collected.
    pub async fn collect(&self, session: &str, text: &str) -> Result<Collected, AgentFailure> {
        tokio::time::timeout(PATIENCE, self.invoke(session, text).collect())
            .await
            .expect("the turn ends")
    }

    /// How long after `since` a turn of `session` is no longer refused `session_busy`,
    /// trying as often as the runtime lets it until `bound` has passed; `None` when it stayed
    /// busy. The turn it starts is answered `text`'s.
    pub async fn until_free(
        &self,
        session: &str,
        text: &str,
        since: Instant,
        bound: Duration,
    ) -> Option<(Duration, AgentEvents)> {
        loop {
            let mut events = self.invoke(session, text);
            let busy = match events.recv().now_or_never() {
                Some(Some(AgentEvent::Failed { code, .. })) => {
                    code.as_deref() == Some("session_busy")
                }
                _ => false,
            };
            let elapsed = since.elapsed();
            if !busy {
                return Some((elapsed, events));
            }
            if elapsed > bound {
                return None;
            }
            tokio::task::yield_now().await;
        }
    }

    /// Serves the agent at `POST /agents/subject/invoke` on 127.0.0.1, acting on the rig's
    /// episode, a quiet stream pinged every `heartbeat`; answers the invoke URL.
    pub async fn serve(&self, heartbeat: Duration) -> String {
        let state = server::AppState {
            host: self.host.clone(),
            root: self.episode.clone(),
            mcp: Arc::new(server::mcp::Endpoints::new(&self.host).expect("the tool listings")),
            deployments: Arc::default(),
            access: server::Access::open(),
            agent_heartbeat: heartbeat,
            url_prefix: server::UrlPrefix::default(),
            allowed_hosts: None,
        };
        let router = server::router(state, server::DEFAULT_MAX_BODY_BYTES);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!(
            "http://{}/agents/{AGENT}/invoke",
            listener.local_addr().expect("an address")
        );
        tokio::spawn(server::run(listener, router, std::future::pending()));
        url
    }
}

/// `events` read to their end, as JSON.
pub async fn drain(mut events: AgentEvents) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout(PATIENCE, events.recv()).await {
            Ok(Some(event)) => seen.push(event.to_json()),
            Ok(None) => return seen,
            Err(_) => panic!("the turn is still running after {PATIENCE:?}: {seen:?}"),
        }
    }
}

/// Whether `event` is a terminal.
pub fn is_terminal(event: &Value) -> bool {
    matches!(event["type"].as_str(), Some("completed" | "failed"))
}

/// Checks MUST 1 on a drained turn: at least one event, exactly one terminal, and it is the
/// last; answers the terminal.
pub fn the_terminal(events: &[Value]) -> &Value {
    let terminals = events.iter().filter(|e| is_terminal(e)).count();
    assert_eq!(terminals, 1, "not exactly one terminal: {events:?}");
    let last = events.last().expect("at least one event");
    assert!(is_terminal(last), "the terminal is not last: {events:?}");
    last
}

/// The text deltas of `events`, joined.
pub fn text(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "text")
        .filter_map(|e| e["delta"].as_str())
        .collect()
}

/// `POST url` with `body` as `application/json`.
pub fn post(url: &str, body: &Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
}

/// The `data:` frames of an event stream, each parsed as JSON.
pub fn frames(stream: &str) -> Vec<Value> {
    stream
        .split("\n\n")
        .filter_map(|frame| frame.strip_prefix("data: "))
        .map(|json| serde_json::from_str(json).expect("a data frame is JSON"))
        .collect()
}
