//! Turns of `guests/tool-agent` bound to a slack episode, through the host's broker, with a
//! Chat Completions server on loopback as the model (a queue of scripted answers): the events
//! of a turn with a tool call, the episode changed by the call, the session carried to the next
//! turn, `session_busy`, and a model error as the `failed` terminal.

use std::sync::Arc;

use envhost::agent::events::AgentEvent;
use envhost::agent::model::ModelEndpoint;
use envhost::agent::sessions::Sessions;
use envhost::agent::turn::{TurnSetup, collect, invoke};
use envhost::protocol::Part;
use envhost::runtime::agent::Agent;
use envhost::runtime::agent::bindings::agentenv::agent::types::{Prompt, Scope};
use envhost::runtime::{Limits, Runtime};
use envhost::{EnvironmentConfig, Host, HostConfig};
use envhost_tests::guest;
use envhost_tests::model::{Answer, Model, serve, tool_call};
use serde_json::{Value, json};

async fn model(answers: Vec<Answer>) -> (ModelEndpoint, Arc<Model>) {
    let (url, model) = serve(answers).await;
    (ModelEndpoint::new(&url, None).unwrap(), model)
}

async fn setup(endpoint: ModelEndpoint) -> (TurnSetup, Host) {
    let host = Host::new(HostConfig::new(vec![EnvironmentConfig::new(
        "slack",
        guest("slack"),
    )]))
    .await
    .unwrap();
    let episode = host.create_episode("slack").await.unwrap();
    let seed = json!({"channels": [{"name": "general", "topic": ""}], "messages": []});
    episode
        .add_data(vec![
            serde_json::from_value::<Part>(json!({"kind": "data", "data": seed})).unwrap(),
        ])
        .await
        .unwrap();
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(guest("tool_agent")).unwrap();
    let agent = Agent::from_bytes(&runtime, bytes, Limits::default())
        .await
        .unwrap();
    let setup = TurnSetup {
        agent: Arc::new(agent),
        episode,
        sessions: Sessions::in_memory(),
        model: Some(endpoint),
        model_name: "scripted".into(),
    };
    (setup, host)
}

fn scope(session: &str) -> Scope {
    Scope {
        session: session.into(),
        parent_session: None,
        branch_hints: Vec::new(),
    }
}

fn prompt(text: &str) -> Prompt {
    Prompt {
        text: text.into(),
        images: Vec::new(),
    }
}

async fn events(setup: &TurnSetup, session: &str, text: &str) -> Vec<Value> {
    let mut reader = invoke(setup.clone(), scope(session), prompt(text));
    let mut events = Vec::new();
    while let Some(event) = reader.recv().await {
        events.push(event.to_json());
    }
    events
}

#[tokio::test]
async fn a_turn_calls_an_episode_tool_between_tool_events_and_completes() {
    let args = json!({"channel": "general", "text": "hello from the agent"});
    let (endpoint, model) = model(vec![
        Answer::Stream(vec![
            json!({"reasoning_content": "Post it."}),
            tool_call("call_1", "slack_send_message", &args),
        ]),
        Answer::Stream(vec![json!({"content": "Posted."})]),
        Answer::Stream(vec![json!({"content": "Still here."})]),
    ])
    .await;
    let (setup, _host) = setup(endpoint).await;
    let turn = events(&setup, "s1", "post hello").await;
    assert_eq!(turn[0], json!({"type": "thinking", "delta": "Post it."}));
    assert_eq!(
        turn[1],
        json!({"type": "tool_started", "id": "call_1", "name": "slack_send_message", "args": args})
    );
    assert_eq!(turn[2]["type"], "tool_ended");
    assert_eq!(turn[2]["id"], "call_1");
    assert_eq!(turn[2]["isError"], false);
    assert_eq!(turn[3], json!({"type": "text", "delta": "Posted."}));
    assert_eq!(turn[4], json!({"type": "completed"}));
    assert_eq!(turn.len(), 5);

    let data = setup.episode.get_data().await.unwrap();
    let shown = serde_json::to_string(&data).unwrap();
    assert!(shown.contains("hello from the agent"), "{shown}");

    let again = events(&setup, "s1", "still there?").await;
    assert_eq!(again.last().unwrap(), &json!({"type": "completed"}));
    let requests = model.requests.lock().unwrap();
    let third: Vec<&str> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(third, ["user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(requests[0]["model"], "scripted");
    assert!(
        requests[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "slack_send_message")
    );
}

#[tokio::test]
async fn a_second_turn_on_a_busy_session_fails_at_once_and_another_session_runs() {
    let (endpoint, _model) = model(vec![
        Answer::Hang,
        Answer::Stream(vec![json!({"content": "Other."})]),
    ])
    .await;
    let (setup, _host) = setup(endpoint).await;
    let first = invoke(setup.clone(), scope("busy"), prompt("wait"));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let second = events(&setup, "busy", "me too").await;
    assert_eq!(
        second,
        [
            json!({"type": "failed", "details": "the session \"busy\" has a turn running",
            "retryable": true, "code": "session_busy"})
        ]
    );
    let other = collect(invoke(setup.clone(), scope("other"), prompt("hi"))).await;
    assert_eq!(other, Some(Ok(("Other.".into(), None))));
    drop(first);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        setup.sessions.begin("busy").is_some(),
        "the dropped turn still holds its session"
    );
}

#[tokio::test]
async fn model_errors_are_failed_terminals_with_their_retryability() {
    let (endpoint, _model) = model(vec![Answer::Status(429), Answer::Status(400)]).await;
    let (setup, _host) = setup(endpoint).await;
    let limited = collect(invoke(setup.clone(), scope("a"), prompt("hi"))).await;
    assert!(
        matches!(limited, Some(Err(AgentEvent::Failed { retryable: true, ref code, .. })) if code.as_deref() == Some("rate_limited")),
        "{limited:?}"
    );
    let refused = collect(invoke(setup.clone(), scope("b"), prompt("hi"))).await;
    assert!(
        matches!(refused, Some(Err(AgentEvent::Failed { retryable: false, ref code, .. })) if code.as_deref() == Some("model_refused")),
        "{refused:?}"
    );
}
