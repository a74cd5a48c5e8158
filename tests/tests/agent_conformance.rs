//! The host's side of the Agent Handler contract, with `guests/conformance-agent` (whose prompt
//! picks what it does) run through the host's turns on a slack episode: exactly one terminal,
//! the guest's err as `failed`, a trap as `agent_trap` after the events before it, a spin as
//! `deadline_exceeded`, extension events relayed and ignored by `collect`, reserved names and
//! bad JSON as protocol violations.

use std::time::Duration;

use envhost::agent::{AgentEvent, Collected, Prompt, Scope};
use envhost::runtime::Limits;
use envhost::{AgentConfig, EnvironmentConfig, Host, HostConfig};
use envhost_tests::guest;
use serde_json::{Value, json};

/// A host serving slack and the agent `conformance` bound to it (no model); one episode.
struct Rig {
    host: Host,
    episode: String,
}

async fn setup(limits: Limits) -> Rig {
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("slack", guest("slack"))]);
    let mut agent = AgentConfig::new("conformance", guest("conformance_agent"), "slack");
    agent.limits = limits;
    config.agents.push(agent);
    let host = Host::new(config).await.unwrap();
    let episode = host.create_episode("slack").await.unwrap().id().to_owned();
    Rig { host, episode }
}

impl Rig {
    fn scope(&self, session: &str) -> Scope {
        Scope::new(session, self.episode.clone())
    }
}

async fn turn(rig: &Rig, text: &str) -> Vec<Value> {
    let mut reader = rig
        .host
        .invoke(
            "conformance",
            rig.scope(&format!("session-{text}")),
            Prompt::text(text),
        )
        .unwrap();
    let mut events = Vec::new();
    while let Some(event) = reader.recv().await {
        events.push(event.to_json());
    }
    let terminals = events
        .iter()
        .filter(|e| matches!(e["type"].as_str(), Some("completed" | "failed")))
        .count();
    assert_eq!(terminals, 1, "{text}: {events:?}");
    assert!(
        matches!(
            events.last().unwrap()["type"].as_str(),
            Some("completed" | "failed")
        ),
        "{text}: the terminal is not last: {events:?}"
    );
    events
}

#[tokio::test]
async fn completion_and_failure_are_the_guests_answers() {
    let rig = setup(Limits::default()).await;
    assert_eq!(
        turn(&rig, "complete").await,
        [
            json!({"type": "text", "delta": "ok"}),
            json!({"type": "completed", "data": {"n": 1}})
        ]
    );
    assert_eq!(
        turn(&rig, "fail").await,
        [json!({"type": "failed", "details": "asked to fail", "retryable": true, "code": "asked"})]
    );
}

#[tokio::test]
async fn a_trap_is_agent_trap_after_the_events_before_it() {
    let rig = setup(Limits::default()).await;
    let events = turn(&rig, "trap").await;
    assert_eq!(events[0], json!({"type": "text", "delta": "before"}));
    assert_eq!(events[1]["code"], "agent_trap");
    assert_eq!(events[1]["retryable"], false);
    let details = events[1]["details"].as_str().unwrap();
    assert!(
        !details.is_empty() && !details.contains('\n'),
        "{details:?}"
    );
    assert!(!details.contains("backtrace"), "{details:?}");
}

#[tokio::test]
async fn a_spin_is_deadline_exceeded() {
    let limits = Limits {
        cpu_deadline: Duration::from_millis(300),
        ..Limits::default()
    };
    let rig = setup(limits).await;
    let started = std::time::Instant::now();
    let events = turn(&rig, "spin").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["code"], "deadline_exceeded");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn extension_events_are_relayed_and_collect_ignores_them() {
    let rig = setup(Limits::default()).await;
    assert_eq!(
        turn(&rig, "citation").await,
        [
            json!({"type": "citation", "url": "https://example.org"}),
            json!({"type": "completed", "data": {"n": 1}})
        ]
    );
    let collected = rig
        .host
        .invoke(
            "conformance",
            rig.scope("collect"),
            Prompt::text("citation"),
        )
        .unwrap()
        .collect()
        .await;
    assert_eq!(
        collected,
        Ok(Collected {
            text: String::new(),
            data: Some(json!({"n": 1}))
        })
    );
}

#[tokio::test]
async fn a_reserved_name_or_bad_json_is_a_protocol_violation_never_a_second_terminal() {
    let rig = setup(Limits::default()).await;
    for text in ["reserved", "bad-json"] {
        let events = turn(&rig, text).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["code"], "protocol_violation");
        assert_eq!(events[0]["retryable"], false);
    }
    let failed = AgentEvent::failed("x", "y", false);
    assert!(failed.is_terminal());
}
