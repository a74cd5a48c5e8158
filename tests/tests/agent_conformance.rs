//! The host's side of the Agent Handler contract, with `guests/conformance-agent` (whose prompt
//! picks what it does) run through the host's turns on a slack episode: exactly one terminal,
//! the guest's err as `failed`, a trap as `agent_trap` after the events before it, a spin as
//! `deadline_exceeded`, extension events relayed and ignored by `collect`, reserved names and
//! bad JSON as protocol violations.

use std::sync::Arc;
use std::time::Duration;

use envhost::agent::events::AgentEvent;
use envhost::agent::sessions::Sessions;
use envhost::agent::turn::{TurnSetup, collect, invoke};
use envhost::runtime::agent::Agent;
use envhost::runtime::agent::bindings::agentenv::agent::types::{Prompt, Scope};
use envhost::runtime::{Limits, Runtime};
use envhost::{EnvironmentConfig, Host, HostConfig};
use envhost_tests::guest;
use serde_json::{Value, json};

async fn setup(limits: Limits) -> (TurnSetup, Host) {
    let host = Host::new(HostConfig::new(vec![EnvironmentConfig::new(
        "slack",
        guest("slack"),
    )]))
    .await
    .unwrap();
    let episode = host.create_episode("slack").await.unwrap();
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(guest("conformance_agent")).unwrap();
    let agent = Agent::from_bytes(&runtime, bytes, limits).await.unwrap();
    let setup = TurnSetup {
        agent: Arc::new(agent),
        episode,
        sessions: Sessions::in_memory(),
        model: None,
        model_name: String::new(),
    };
    (setup, host)
}

async fn turn(setup: &TurnSetup, text: &str) -> Vec<Value> {
    let scope = Scope {
        session: format!("session-{text}"),
        parent_session: None,
        branch_hints: Vec::new(),
    };
    let prompt = Prompt {
        text: text.into(),
        images: Vec::new(),
    };
    let mut reader = invoke(setup.clone(), scope, prompt);
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
    let (setup, _host) = setup(Limits::default()).await;
    assert_eq!(
        turn(&setup, "complete").await,
        [
            json!({"type": "text", "delta": "ok"}),
            json!({"type": "completed", "data": {"n": 1}})
        ]
    );
    assert_eq!(
        turn(&setup, "fail").await,
        [json!({"type": "failed", "details": "asked to fail", "retryable": true, "code": "asked"})]
    );
}

#[tokio::test]
async fn a_trap_is_agent_trap_after_the_events_before_it() {
    let (setup, _host) = setup(Limits::default()).await;
    let events = turn(&setup, "trap").await;
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
    let (setup, _host) = setup(limits).await;
    let started = std::time::Instant::now();
    let events = turn(&setup, "spin").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["code"], "deadline_exceeded");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn extension_events_are_relayed_and_collect_ignores_them() {
    let (setup, _host) = setup(Limits::default()).await;
    assert_eq!(
        turn(&setup, "citation").await,
        [
            json!({"type": "citation", "url": "https://example.org"}),
            json!({"type": "completed", "data": {"n": 1}})
        ]
    );
    let scope = Scope {
        session: "collect".into(),
        parent_session: None,
        branch_hints: Vec::new(),
    };
    let prompt = Prompt {
        text: "citation".into(),
        images: Vec::new(),
    };
    assert_eq!(
        collect(invoke(setup.clone(), scope, prompt)).await,
        Some(Ok((String::new(), Some(json!({"n": 1})))))
    );
}

#[tokio::test]
async fn a_reserved_name_or_bad_json_is_a_protocol_violation_never_a_second_terminal() {
    let (setup, _host) = setup(Limits::default()).await;
    for text in ["reserved", "bad-json"] {
        let events = turn(&setup, text).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["code"], "protocol_violation");
        assert_eq!(events[0]["retryable"], false);
    }
    let failed = AgentEvent::failed("x", "y", false);
    assert!(failed.is_terminal());
}
