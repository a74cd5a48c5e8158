//! The bench's turns: seeded episodes, and turns run one after another or all at once, each
//! checked and timed.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use envhost::agent::model::{ChatRequest, Message, ModelEndpoint, Role, ToolSpec};
use envhost::agent::{AgentEvent, Prompt, Scope};
use envhost::protocol::Part;
use envhost::{Episode, Host};
use envhost_tests::load::measured::median;
use envhost_tests::load::procfs::{proc_memory, thread_cpu_ns};
use serde_json::json;

/// `count` slack episodes, each seeded with the channel `general`.
pub async fn seeded_episodes(host: &Host, count: usize) -> anyhow::Result<Vec<Arc<Episode>>> {
    let seed = json!({"kind": "data", "data": {"channels": [{"name": "general", "topic": ""}]}});
    let part: Part = serde_json::from_value(seed)?;
    let mut episodes = Vec::with_capacity(count);
    for _ in 0..count {
        let episode = host.create_episode("slack").await?;
        episode.add_data(vec![part.clone()]).await?;
        episodes.push(episode);
    }
    Ok(episodes)
}

/// One turn's timings, in ns.
struct Timed {
    first_event_ns: u64,
    wall_ns: u64,
}

/// Runs one turn of `session` on `episode`, checking it made `tools` tool calls and completed.
async fn turn(
    host: &Host,
    session: String,
    episode: &Episode,
    tools: usize,
) -> anyhow::Result<Timed> {
    let started = Instant::now();
    let mut events = host.invoke(
        "tool",
        Scope::new(session.clone(), episode.id()),
        Prompt::text("post three notes"),
    )?;
    let mut first_event_ns = None;
    let mut started_tools = 0;
    let mut terminal = None;
    while let Some(event) = events.recv().await {
        first_event_ns.get_or_insert_with(|| nanos(started));
        match event {
            AgentEvent::ToolStarted { .. } => started_tools += 1,
            AgentEvent::Completed { .. } | AgentEvent::Failed { .. } => terminal = Some(event),
            _ => {}
        }
    }
    let wall_ns = nanos(started);
    anyhow::ensure!(
        matches!(terminal, Some(AgentEvent::Completed { .. })) && started_tools == tools,
        "the turn of {session} ended {terminal:?} after {started_tools} tool calls"
    );
    Ok(Timed {
        first_event_ns: first_event_ns.unwrap_or(wall_ns),
        wall_ns,
    })
}

fn nanos(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The sequential phase's p50s, in ns.
pub struct Sequential {
    /// The host's CPU time per turn.
    pub cpu_p50_ns: u64,
    /// From `invoke` to the first event.
    pub first_event_p50_ns: u64,
    /// A whole turn.
    pub wall_p50_ns: u64,
}

/// `count` turns one after another, in sessions `{prefix}-{i}` on the episodes in turn.
pub async fn sequential(
    host: &Host,
    episodes: &[Arc<Episode>],
    prefix: &str,
    count: usize,
    tools: usize,
) -> anyhow::Result<Sequential> {
    let mut cpu = Vec::with_capacity(count);
    let mut first = Vec::with_capacity(count);
    let mut wall = Vec::with_capacity(count);
    for i in 0..count {
        let before = thread_cpu_ns();
        let timed = turn(
            host,
            format!("{prefix}-{i}"),
            &episodes[i % episodes.len()],
            tools,
        )
        .await?;
        cpu.push(thread_cpu_ns() - before);
        first.push(timed.first_event_ns);
        wall.push(timed.wall_ns);
    }
    Ok(Sequential {
        cpu_p50_ns: median(&cpu),
        first_event_p50_ns: median(&first),
        wall_p50_ns: median(&wall),
    })
}

/// The concurrent phase's measures.
pub struct Concurrent {
    /// All turns, start to last terminal, in ns.
    pub wall_ns: u64,
    /// The host's CPU time per turn, in ns.
    pub cpu_per_turn_ns: u64,
    /// From `invoke` to the first event, p50, in ns.
    pub first_event_p50_ns: u64,
    /// The process's RSS growth per session, in bytes.
    pub rss_bytes_per_session: u64,
}

fn rss_bytes() -> u64 {
    proc_memory(std::process::id()).map_or(0, |m| m.rss * 1024)
}

/// One turn in each of `episodes.len()` sessions `{prefix}-{i}`, all started at once.
pub async fn concurrent(
    host: &Arc<Host>,
    episodes: &[Arc<Episode>],
    prefix: &str,
    tools: usize,
) -> anyhow::Result<Concurrent> {
    let rss_before = rss_bytes();
    let cpu_before = thread_cpu_ns();
    let started = Instant::now();
    let mut running = tokio::task::JoinSet::new();
    for (i, episode) in episodes.iter().enumerate() {
        let (host, episode) = (host.clone(), episode.clone());
        let session = format!("{prefix}-{i}");
        running.spawn(async move { turn(&host, session, &episode, tools).await });
    }
    let mut first = Vec::with_capacity(episodes.len());
    while let Some(done) = running.join_next().await {
        first.push(done??.first_event_ns);
    }
    let wall_ns = nanos(started);
    let cpu = thread_cpu_ns() - cpu_before;
    let turns = u64::try_from(episodes.len()).unwrap_or(1).max(1);
    Ok(Concurrent {
        wall_ns,
        cpu_per_turn_ns: cpu / turns,
        first_event_p50_ns: median(&first),
        rss_bytes_per_session: rss_bytes().saturating_sub(rss_before) / turns,
    })
}

/// The model's own share of the first event: the p50, over `count` requests, of the time from
/// sending the first request of a turn (the prompt and `environment`'s tools) to its first chunk,
/// through the host's own model client.
pub async fn model_first_chunk(
    host: &Host,
    endpoint: &ModelEndpoint,
    environment: &str,
    count: usize,
) -> anyhow::Result<u64> {
    let catalog = host
        .environment(environment)
        .context("the agent's environment")?;
    let request = ChatRequest {
        messages: vec![Message {
            role: Role::User,
            content: "post three notes".into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }],
        tools: catalog
            .tools
            .iter()
            .map(|t| ToolSpec {
                name: t.tool.name.clone(),
                description: t.tool.description.clone().unwrap_or_default(),
                input_schema: t.schema_json.clone(),
            })
            .collect(),
        max_tokens: None,
        temperature: None,
    };
    let mut took = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let mut stream = endpoint.complete("default", &request).await?;
        anyhow::ensure!(stream.next().await?.is_some(), "the model answered nothing");
        took.push(nanos(started));
        while stream.next().await?.is_some() {}
    }
    Ok(median(&took))
}

/// The p50, over `count` turns of the agent `agent` (one that emits an event before any import
/// call, `guests/conformance-agent`), of the time from `invoke` to its first event: binding the
/// session, a fresh instance and the relay, with no model.
pub async fn bind(
    host: &Host,
    agent: &str,
    episode: &Episode,
    count: usize,
) -> anyhow::Result<u64> {
    let mut took = Vec::with_capacity(count);
    for i in 0..count {
        let started = Instant::now();
        let mut events = host.invoke(
            agent,
            Scope::new(format!("bind-{i}"), episode.id()),
            Prompt::text("hello"),
        )?;
        let first = events.recv().await;
        took.push(nanos(started));
        anyhow::ensure!(
            matches!(first, Some(AgentEvent::Text(_))),
            "the first event of {agent} was {first:?}"
        );
        while events.recv().await.is_some() {}
    }
    Ok(median(&took))
}
