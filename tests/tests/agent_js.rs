//! `guests/tool-agent-js`, the standard loop written with the JavaScript SDK, as an agent of the
//! host, beyond the conformance suite (`agent_spec`): a turn bound to a slack episode with a Chat
//! Completions server on loopback as the model (a tool call on slack, then an answer, and the
//! session carried to the next turn), and turns run by the runtime with a scripted broker (the
//! turn limit, a call the host cannot make).

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, OnceLock};

use envhost::agent::model::ModelEndpoint;
use envhost::agent::{AgentEvents, AgentFailure, Collected, Prompt, Scope};
use envhost::protocol::Part;
use envhost::runtime::agent::bindings::agentenv::agent::env_tools::ToolOutput;
use envhost::runtime::agent::bindings::agentenv::agent::model::{Chunk, ToolCall};
use envhost::runtime::agent::bindings::agentenv::agent::types;
use envhost::runtime::agent::{Agent, TurnEnd};
use envhost::runtime::{Limits, Runtime};
use envhost::{AgentConfig, EnvironmentConfig, Episode, Host, HostConfig};
use envhost_tests::broker::{ScriptedBroker, Seen};
use envhost_tests::model::{Answer, Model, serve, tool_call};
use envhost_tests::{guest, repo_root};
use serde_json::{Value, json};

/// The component, built by `make guests-js` once per process (quick when it is up to date).
fn tool_agent_js() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new("make")
            .arg("guests-js")
            .current_dir(repo_root())
            .status()
            .expect("running make guests-js");
        assert!(status.success(), "make guests-js failed");
    });
    guest("tool-agent-js")
}

/// A host serving slack and the agent `tool-js` bound to it; one seeded episode.
struct Rig {
    host: Host,
    episode: Arc<Episode>,
}

async fn rig(answers: Vec<Answer>) -> (Rig, Arc<Model>) {
    let (url, model) = serve(answers).await;
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("slack", guest("slack"))]);
    let mut agent = AgentConfig::new("tool-js", tool_agent_js(), "slack");
    agent.model = "scripted".into();
    config.agents.push(agent);
    config.model = Some(ModelEndpoint::new(&url, None).unwrap());
    let host = Host::new(config).await.unwrap();
    let episode = host.create_episode("slack").await.unwrap();
    let seed = json!({"channels": [{"name": "general", "topic": ""}], "messages": []});
    episode
        .add_data(vec![
            serde_json::from_value::<Part>(json!({"kind": "data", "data": seed})).unwrap(),
        ])
        .await
        .unwrap();
    (Rig { host, episode }, model)
}

impl Rig {
    fn invoke(&self, session: &str, text: &str) -> AgentEvents {
        let scope = Scope::new(session, self.episode.id());
        self.host
            .invoke("tool-js", scope, Prompt::text(text))
            .unwrap()
    }

    async fn events(&self, session: &str, text: &str) -> Vec<Value> {
        let mut reader = self.invoke(session, text);
        let mut events = Vec::new();
        while let Some(event) = reader.recv().await {
            events.push(event.to_json());
        }
        events
    }

    async fn collect(&self, session: &str, text: &str) -> Result<Collected, AgentFailure> {
        self.invoke(session, text).collect().await
    }
}

#[tokio::test]
async fn a_tool_call_posts_on_slack_then_the_model_answers_and_the_session_carries_on() {
    let args = json!({"channel": "general", "text": "hello from javascript"});
    let (rig, model) = rig(vec![
        Answer::Stream(vec![
            json!({"reasoning_content": "Post it."}),
            tool_call("call_1", "slack_send_message", &args),
        ]),
        Answer::Stream(vec![json!({"content": "Posted."})]),
        Answer::Stream(vec![json!({"content": "Still here."})]),
    ])
    .await;
    let turn = rig.events("s1", "post hello").await;
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

    let data = rig.episode.get_data().await.unwrap();
    let shown = serde_json::to_string(&data).unwrap();
    assert!(shown.contains("hello from javascript"), "{shown}");

    let again = rig.collect("s1", "still there?").await.unwrap();
    assert_eq!(again.text, "Still here.");
    let requests = model.requests.lock().unwrap();
    assert!(
        requests[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "slack_send_message")
    );
    let answered = &requests[1]["messages"][2];
    assert_eq!(answered["role"], "tool");
    assert_eq!(answered["tool_call_id"], "call_1");
    let content: Value = serde_json::from_str(answered["content"].as_str().unwrap()).unwrap();
    assert_eq!(content, turn[2]["content"]);
    let roles: Vec<&str> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
}

/// Runs one turn by the runtime, the model asking for `call` every time and the tool calls
/// answering `tool`.
async fn scripted_turn(call: ToolCall, tool: Result<ToolOutput, String>) -> (TurnEnd, Seen) {
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(tool_agent_js()).unwrap();
    let agent = Agent::from_bytes(&runtime, bytes, Limits::default())
        .await
        .unwrap();
    let (broker, seen) = ScriptedBroker::new(vec![Chunk::ToolCall(call)], tool);
    let scope = types::Scope {
        session: "s1".into(),
        parent_session: None,
        branch_hints: Vec::new(),
    };
    let prompt = types::Prompt {
        text: "go on".into(),
        images: Vec::new(),
    };
    let end = agent
        .invoke(&scope, &prompt, Box::new(broker), "turn")
        .await;
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (end, seen)
}

fn call(args: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "slack_list_inbox".into(),
        args: args.into(),
    }
}

#[tokio::test]
async fn a_model_still_calling_tools_after_eight_steps_fails_turn_limit() {
    let output = ToolOutput {
        is_error: false,
        content: r#"[{"type": "text", "text": "nothing"}]"#.into(),
    };
    let (end, seen) = scripted_turn(call("{}"), Ok(output)).await;
    match end {
        TurnEnd::Failed(failure) => {
            assert_eq!(failure.code.as_deref(), Some("turn_limit"));
            assert!(!failure.retryable);
            assert_eq!(
                failure.details,
                "the model was still calling tools after 8 steps"
            );
        }
        other => panic!("expected failed, got {other:?}"),
    }
    assert_eq!(seen.requests.len(), 8);
    assert_eq!(seen.calls.len(), 8);
    assert!(seen.events.is_empty(), "{:?}", seen.events);
    assert_eq!(seen.appended.len(), 1 + 8 * 2);
    assert_eq!(
        seen.appended[2].content,
        r#"[{"type":"text","text":"nothing"}]"#
    );
}

#[tokio::test]
async fn a_call_the_host_cannot_make_answers_the_model_with_why() {
    let why = "the arguments of slack_list_inbox are not a JSON object: [1".to_string();
    let (_end, seen) = scripted_turn(call("[1"), Err(why.clone())).await;
    let answer = &seen.requests[1].messages[2];
    assert_eq!(answer.content, why);
    assert_eq!(answer.tool_call_id.as_deref(), Some("c1"));
    let asked: Vec<(&str, &str)> = seen.requests[1].messages[1]
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.args.as_str()))
        .collect();
    assert_eq!(asked, [("c1", "[1")]);
}
