//! `guests/tool-agent` run by the runtime, one fresh instance per turn, its imports served by a
//! broker of the test's: a scripted model (a queue of answers), one tool, a session history.

use std::sync::{Arc, Mutex};

use envhost::runtime::agent::bindings::agentenv::agent::env_tools::ToolOutput;
use envhost::runtime::agent::bindings::agentenv::agent::model::{
    Chunk, Message, ModelError, Role, ToolCall, ToolSpec,
};
use envhost::runtime::agent::bindings::agentenv::agent::types::{Prompt, Scope};
use envhost::runtime::agent::{Agent, TurnEnd};
use envhost::runtime::{Limits, Runtime};
use envhost_tests::broker::{ScriptedBroker, Seen};
use envhost_tests::guest;

async fn agent() -> Agent {
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(guest("tool_agent")).unwrap();
    Agent::from_bytes(&runtime, bytes, Limits::default())
        .await
        .unwrap()
}

fn scope() -> Scope {
    Scope {
        session: "-1001234567890".into(),
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

fn broker(answers: Vec<Result<Vec<Chunk>, ModelError>>) -> (ScriptedBroker, Arc<Mutex<Seen>>) {
    let two = ToolOutput {
        is_error: false,
        content: r#"[{"type": "text", "text": "2 messages"}]"#.into(),
    };
    let (mut broker, seen) = ScriptedBroker::new(vec![Chunk::Text("(no script)".into())], Ok(two));
    broker.answers = answers.into();
    broker.tools = vec![ToolSpec {
        name: "slack_list_inbox".into(),
        description: "Lists the inbox.".into(),
        input_schema: r#"{"type": "object"}"#.into(),
    }];
    (broker, seen)
}

#[tokio::test]
async fn a_turn_calls_the_model_then_a_tool_then_the_model_and_completes() {
    let agent = agent().await;
    let (broker, seen) = broker(vec![
        Ok(vec![
            Chunk::Thinking("The inbox first.".into()),
            Chunk::Text("Looking.".into()),
            Chunk::ToolCall(ToolCall {
                id: "c1".into(),
                name: "slack_list_inbox".into(),
                args: "{}".into(),
            }),
        ]),
        Ok(vec![Chunk::Text("You have 2 messages.".into())]),
    ]);
    let end = agent
        .invoke(&scope(), &prompt("any mail?"), Box::new(broker), "turn")
        .await;
    assert!(
        matches!(end, TurnEnd::Completed(ref c) if c.data.is_none()),
        "{end:?}"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.events,
        [
            "thinking The inbox first.",
            "text Looking.",
            "text You have 2 messages."
        ]
    );
    assert_eq!(
        seen.calls,
        [("c1".into(), "slack_list_inbox".into(), "{}".into())]
    );
    assert_eq!(seen.requests.len(), 2);
    assert_eq!(seen.requests[0].tools.len(), 1);
    let second: Vec<(Role, &str, Option<&str>)> = seen.requests[1]
        .messages
        .iter()
        .map(|m| (m.role, m.content.as_str(), m.tool_call_id.as_deref()))
        .collect();
    assert_eq!(
        second,
        [
            (Role::User, "any mail?", None),
            (Role::Assistant, "Looking.", None),
            (
                Role::Tool,
                r#"[{"type": "text", "text": "2 messages"}]"#,
                Some("c1")
            ),
        ]
    );
    assert_eq!(seen.appended.len(), 4);
    assert_eq!(seen.appended[3].content, "You have 2 messages.");
}

#[tokio::test]
async fn the_history_goes_to_the_model_before_the_prompt() {
    let agent = agent().await;
    let (mut broker, seen) = broker(vec![Ok(vec![Chunk::Text("Again.".into())])]);
    broker.history = vec![Message {
        role: Role::User,
        content: "earlier".into(),
        tool_calls: Vec::new(),
        tool_call_id: None,
    }];
    let end = agent
        .invoke(&scope(), &prompt("now"), Box::new(broker), "turn")
        .await;
    assert!(matches!(end, TurnEnd::Completed(_)), "{end:?}");
    let contents: Vec<String> = seen.lock().unwrap().requests[0]
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(contents, ["earlier", "now"]);
}

#[tokio::test]
async fn a_model_error_is_the_failed_terminal_with_its_retryability() {
    let agent = agent().await;
    for (error, code, retryable) in [
        (ModelError::RateLimited(2_000), "rate_limited", true),
        (
            ModelError::Unavailable("HTTP 503".into()),
            "model_unavailable",
            true,
        ),
        (
            ModelError::InvalidRequest("HTTP 400".into()),
            "model_refused",
            false,
        ),
    ] {
        let (broker, seen) = broker(vec![Err(error)]);
        match agent
            .invoke(&scope(), &prompt("hi"), Box::new(broker), "turn")
            .await
        {
            TurnEnd::Failed(f) => {
                assert_eq!(f.code.as_deref(), Some(code));
                assert_eq!(f.retryable, retryable);
                assert!(!f.details.is_empty());
            }
            other => panic!("expected failed, got {other:?}"),
        }
        let appended = &seen.lock().unwrap().appended;
        assert_eq!(
            appended.len(),
            1,
            "the failed turn's prompt stays in the session"
        );
    }
}

#[tokio::test]
async fn a_caller_that_leaves_ends_the_turn_without_a_terminal() {
    let agent = agent().await;
    let (mut broker, seen) = broker(vec![Ok(vec![
        Chunk::Text("one".into()),
        Chunk::Text("two".into()),
    ])]);
    broker.leaves = true;
    let end = agent
        .invoke(&scope(), &prompt("hi"), Box::new(broker), "turn")
        .await;
    assert!(matches!(end, TurnEnd::CallerGone), "{end:?}");
    let appended = &seen.lock().unwrap().appended;
    assert_eq!(
        appended.len(),
        1,
        "only the prompt: the step in flight never finished"
    );
    assert_eq!(appended[0].content, "hi");
}

#[tokio::test]
async fn an_environment_is_not_an_agent() {
    let runtime = Runtime::new().unwrap();
    let bytes = std::fs::read(guest("counter")).unwrap();
    let refused = Agent::from_bytes(&runtime, bytes, Limits::default())
        .await
        .err()
        .expect("refused");
    assert_eq!(
        refused.to_string(),
        "an environment component, not an agent",
        "{refused}"
    );
}
