//! The spec's checks, written once for any [`Subject`]; `spec_suite!` in `main.rs` runs each for
//! every example agent.

use std::time::{Duration, Instant};

use envhost::agent::{AgentFailure, Collected};
use envhost::runtime::{EPOCH_TICK, Limits};
use envhost_tests::model::{Answer, serve, tool_call};
use futures::{FutureExt as _, StreamExt as _};
use serde_json::{Value, json};

use crate::rig::{
    Rig, Subject, TempDir, drain, frames, hello, is_terminal, post, text, the_terminal,
};

/// The most model calls of the example agents' turns.
const MAX_STEPS: usize = 8;

/// How soon the model must see a cancelled turn's request closed.
pub const MODEL_CLOSED_WITHIN: Duration = Duration::from_millis(500);

/// How soon a cancelled turn's session must be free again: one epoch tick, and scheduling
/// slack for a loaded 2-core machine (less than the epoch's idle tick, 10 ms, so a turn the
/// ticker does not count as running fails it).
pub const FREED_WITHIN: Duration = EPOCH_TICK.saturating_add(Duration::from_millis(5));

/// MUST 1: a turn read to its end has exactly one terminal, `completed`, and it is last; the
/// text deltas are the model's text, and `collect` answers them.
pub async fn must_1_completing(subject: &Subject) {
    let rig = subject.completing().await;
    let events = rig.drain("spec-ok", "go").await;
    assert_eq!(the_terminal(&events)["type"], "completed", "{events:?}");
    assert_eq!(text(&events), "Hello", "{events:?}");
    let collected = rig
        .collect("spec-ok-collect", "go")
        .await
        .expect("completed");
    assert_eq!(collected.text, "Hello");
}

/// MUST 1 with the environment's tools (row 14): a call that succeeds and one that fails are
/// each wrapped in `tool_started` / `tool_ended` with the model's call id, the failing one
/// `isError: true`, and the turn goes on to its one `completed`; the model is given both
/// answers.
pub async fn must_1_after_tool_calls(subject: &Subject) {
    let sent = json!({"channel": "general", "text": "hello from the agent"});
    let lost = json!({"channel": "nowhere", "text": "lost"});
    let rig = subject
        .with_model(vec![
            Answer::Stream(vec![tool_call("call_ok", "slack_send_message", &sent)]),
            Answer::Stream(vec![tool_call("call_err", "slack_send_message", &lost)]),
            Answer::Stream(vec![json!({"content": "Done."})]),
        ])
        .await;
    let events = rig.drain("spec-tools", "post hello").await;
    assert_eq!(the_terminal(&events)["type"], "completed", "{events:?}");
    let tools: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("tool_")))
        .collect();
    assert_eq!(tools.len(), 4, "{events:?}");
    for (pair, (id, args, is_error)) in tools
        .chunks(2)
        .zip([("call_ok", &sent, false), ("call_err", &lost, true)])
    {
        assert_eq!(
            pair[0],
            &json!({"type": "tool_started", "id": id, "name": "slack_send_message", "args": args})
        );
        assert_eq!(pair[1]["type"], "tool_ended", "{events:?}");
        assert_eq!(pair[1]["id"], id, "{events:?}");
        assert_eq!(pair[1]["isError"], is_error, "{events:?}");
        assert!(pair[1]["content"].is_array(), "{events:?}");
    }
    assert_eq!(text(&events), "Done.");
    let requests = rig.model.requests.lock().unwrap();
    let answered: Vec<&str> = requests[2]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(answered, ["call_ok", "call_err"]);
}

/// MUST 2 and row 17: a model error is one `failed` terminal, never an error of the stream,
/// with non-empty details and a boolean `retryable`: 429 `rate_limited` and 503
/// `model_unavailable` retryable, 400 `model_refused` not; `collect` answers it as the
/// failure, its code carried. So is the agent's own failure: `turn_limit`, not retryable, when
/// the model still calls tools after [`MAX_STEPS`] calls.
pub async fn must_2_model_errors(subject: &Subject) {
    for (status, code, retryable) in [
        (429, "rate_limited", true),
        (503, "model_unavailable", true),
        (400, "model_refused", false),
    ] {
        let rig = subject.failing(status).await;
        let events = rig.drain("spec-fail", "go").await;
        let failed = the_terminal(&events);
        assert_eq!(failed["type"], "failed", "{status}: {events:?}");
        assert!(
            failed["details"].as_str().is_some_and(|d| !d.is_empty()),
            "{status}: {failed}"
        );
        assert_eq!(failed["retryable"], retryable, "{status}: {failed}");
        assert_eq!(failed["code"], code, "{status}: {failed}");
        let rig = subject.failing(status).await;
        let failure = rig.collect("spec-fail-collect", "go").await.unwrap_err();
        assert_eq!(
            (failure.code.as_deref(), failure.retryable),
            (Some(code), retryable),
            "{status}: {failure:?}"
        );
        assert!(!failure.details.is_empty(), "{failure:?}");
    }
    let args = json!({"channel": "general", "text": "again"});
    let calls = (0..=MAX_STEPS)
        .map(|i| {
            Answer::Stream(vec![tool_call(
                &format!("call_{i}"),
                "slack_send_message",
                &args,
            )])
        })
        .collect();
    let rig = subject.with_model(calls).await;
    let events = rig.drain("spec-limit", "loop").await;
    let failed = the_terminal(&events);
    assert_eq!(failed["code"], "turn_limit", "{failed}");
    assert_eq!(failed["retryable"], false, "{failed}");
    assert!(
        failed["details"].as_str().is_some_and(|d| !d.is_empty()),
        "{failed}"
    );
    assert_eq!(rig.model.requests.lock().unwrap().len(), MAX_STEPS);
}

/// MUST 3 and row 3: a consumer that drops the events mid-turn (after one event, while the
/// model streams; or before any, while the model has not answered) gets no terminal; the
/// model's request is closed within [`MODEL_CLOSED_WITHIN`] and the session is free again
/// within [`FREED_WITHIN`].
pub async fn must_3_cancellation(subject: &Subject) {
    let rig = subject.hanging().await;
    let mut events = rig.invoke("spec-cancel", "go");
    let first = tokio::time::timeout(Duration::from_secs(20), events.recv())
        .await
        .expect("an event while the model streams")
        .expect("the turn goes on");
    assert_eq!(first.to_json(), json!({"type": "text", "delta": "One"}));
    assert_eq!(rig.model.held(), 1, "the model's answer is being read");
    drop(events);
    let left = Instant::now();
    let (freed, mut next) = rig
        .until_free("spec-cancel", "again", left, FREED_WITHIN)
        .await
        .unwrap_or_else(|| {
            panic!("the session is still busy {FREED_WITHIN:?} after its caller left")
        });
    assert!(
        rig.model.until_closed(1, MODEL_CLOSED_WITHIN).await,
        "the model's request is still open {MODEL_CLOSED_WITHIN:?} after the caller left"
    );
    println!(
        "freed after {freed:?}, the model's request closed after {:?}",
        left.elapsed()
    );

    assert!(
        rig.model.until_opened(2, Duration::from_secs(20)).await,
        "the next turn asks the model"
    );
    assert!(
        next.recv().now_or_never().is_none(),
        "no event before the model answers"
    );
    drop(next);
    let left = Instant::now();
    assert!(
        rig.until_free("spec-cancel", "again", left, FREED_WITHIN)
            .await
            .is_some(),
        "the session is still busy {FREED_WITHIN:?} after its caller left"
    );
    assert!(
        rig.model.until_closed(2, MODEL_CLOSED_WITHIN).await,
        "the unanswered request is still open {MODEL_CLOSED_WITHIN:?} after the caller left"
    );
}

/// MUST 6 and row 5: two hosts sharing only a sessions directory, one after the other, on
/// session `-1001234567890`: both turns complete, and the second's model request holds the
/// first turn.
pub async fn must_6_pair(subject: &Subject, name: &str) {
    const SESSION: &str = "-1001234567890";
    let dir = TempDir::new(&format!("agent-spec-{name}"));
    let (url, model) = serve(vec![
        Answer::Stream(vec![json!({"content": "First."})]),
        Answer::Stream(vec![json!({"content": "Second."})]),
    ])
    .await;
    let a = Rig::on_model(subject.agent(), &url, model.clone(), Some(dir.path())).await;
    let one = a.drain(SESSION, "turn one").await;
    assert_eq!(the_terminal(&one)["type"], "completed", "{one:?}");
    drop(a);
    let b = Rig::on_model(subject.agent(), &url, model.clone(), Some(dir.path())).await;
    let two = b.drain(SESSION, "turn two").await;
    assert_eq!(the_terminal(&two)["type"], "completed", "{two:?}");
    let requests = model.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    let conversation: Vec<(&str, &str)> = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default(),
                m["content"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        conversation,
        [
            ("user", "turn one"),
            ("assistant", "First."),
            ("user", "turn two")
        ]
    );
}

/// Row 4: every event of a success (with a tool call) and of a failure arrives over HTTP as a
/// frame of JSON text with its `type`; `args` and `content` are JSON values (the call's
/// arguments as the model gave them, MCP content blocks), not JSON text in a string.
/// `completed`'s `data` is checked with conformance-agent's (`host::`).
pub async fn row_4_events_are_json(subject: &Subject) {
    let args = json!({"channel": "general", "text": "as json"});
    let rig = subject
        .with_model(vec![
            Answer::Stream(vec![
                json!({"reasoning_content": "Post it."}),
                tool_call("call_1", "slack_send_message", &args),
            ]),
            Answer::Stream(vec![json!({"content": "Sent."})]),
            Answer::Status(503),
        ])
        .await;
    let url = rig.serve(Duration::from_secs(30)).await;
    let mut kinds = Vec::new();
    for session in ["json-ok", "json-fail"] {
        let response = post(&url, &json!({"session": session, "text": "post it"}))
            .send()
            .await
            .expect("POST invoke");
        assert_eq!(response.status(), 200);
        let stream = response.text().await.expect("the stream");
        let events = frames(&stream);
        the_terminal(&events);
        for event in &events {
            match event["type"].as_str() {
                Some("tool_started") => assert_eq!(event["args"], args),
                Some("tool_ended") => {
                    let blocks = event["content"].as_array().expect("content blocks");
                    assert!(blocks.iter().all(|b| b["type"].is_string()), "{event}");
                }
                _ => {}
            }
            kinds.push(event["type"].as_str().unwrap_or_default().to_owned());
        }
    }
    assert_eq!(
        kinds,
        [
            "thinking",
            "tool_started",
            "tool_ended",
            "text",
            "completed",
            "failed"
        ]
    );
}

/// Row 6: an instance that cannot start (its memory cap below the component's initial memory)
/// is one `failed{code: "agent_start_failed"}`, in process and over HTTP (a 200 stream, not a
/// 500); the model is never called.
pub async fn row_6_start_failure(subject: &Subject) {
    let mut agent = subject.agent();
    agent.limits = Limits {
        memory_bytes: 64 << 10,
        ..Limits::default()
    };
    let rig = Rig::start(agent, Vec::new()).await;
    let events = rig.drain("start", "go").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["code"], "agent_start_failed", "{events:?}");
    assert!(
        events[0]["details"].as_str().is_some_and(|d| !d.is_empty()),
        "{events:?}"
    );
    let url = rig.serve(Duration::from_secs(30)).await;
    let response = post(&url, &json!({"session": "start", "text": "go"}))
        .send()
        .await
        .expect("POST invoke");
    assert_eq!(response.status(), 200);
    let frames = frames(&response.text().await.expect("the stream"));
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["type"], "failed");
    assert_eq!(frames[0]["code"], "agent_start_failed");
    assert!(rig.model.requests.lock().unwrap().is_empty());
}

/// Row 7: a consumer that leaves before the turn has run never gets the model called; the
/// session's next turn does.
pub async fn row_7_left_before_the_model(subject: &Subject) {
    let rig = subject.completing().await;
    drop(rig.invoke("spec-left", "go"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        rig.model.requests.lock().unwrap().is_empty(),
        "the model was called for a consumer that had left"
    );
    let events = rig.drain("spec-left", "go").await;
    assert_eq!(the_terminal(&events)["type"], "completed", "{events:?}");
    assert_eq!(rig.model.requests.lock().unwrap().len(), 1);
}

/// Row 12: `thinking` is streamed but is not the answer: `collect` answers the text only.
pub async fn row_12_thinking_is_not_text(subject: &Subject) {
    let thinking = || {
        Answer::Stream(vec![
            json!({"reasoning_content": "Let me see."}),
            json!({"content": "Answer."}),
        ])
    };
    let rig = subject.with_model(vec![thinking(), thinking()]).await;
    let events = rig.drain("think", "go").await;
    assert!(
        events.contains(&json!({"type": "thinking", "delta": "Let me see."})),
        "{events:?}"
    );
    assert_eq!(
        rig.collect("think-collect", "go").await,
        Ok(Collected {
            text: "Answer.".into(),
            data: None
        })
    );
}

/// Row 15: a second turn on a session with a turn running gets exactly one `failed{code:
/// "session_busy", retryable: true}`, the first completes, and turns of two other sessions
/// both complete at once.
pub async fn row_15_session_busy(subject: &Subject) {
    let rig = subject
        .with_model(vec![hello(), hello(), hello(), hello()])
        .await;
    let first = rig.invoke("busy", "go");
    let second = drain(rig.invoke("busy", "me too")).await;
    assert_eq!(
        second,
        [
            json!({"type": "failed", "details": "the session \"busy\" has a turn running",
            "retryable": true, "code": "session_busy"})
        ]
    );
    let first = drain(first).await;
    assert_eq!(the_terminal(&first)["type"], "completed", "{first:?}");
    let (a, b) = tokio::join!(rig.collect("other-a", "go"), rig.collect("other-b", "go"));
    assert_eq!(a.map(|c| c.text), Ok::<_, AgentFailure>("Hello".into()));
    assert_eq!(b.map(|c| c.text), Ok::<_, AgentFailure>("Hello".into()));
}

/// Row 16 and MUST 3 over HTTP: the stream is 200 `text/event-stream` (`cache-control:
/// no-cache`) of `data:` frames, a quiet one pinged (`: ping`) every heartbeat; `session_busy`
/// is a 200 stream of its one frame; a client that leaves closes the model's request and frees
/// the session.
pub async fn row_16_stream(subject: &Subject) {
    let rig = subject.hanging().await;
    let url = rig.serve(Duration::from_millis(100)).await;
    let response = post(&url, &json!({"session": "quiet", "text": "go"}))
        .send()
        .await
        .expect("POST invoke");
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let mut body = response.bytes_stream();
    let mut stream = String::new();
    while !stream.contains(": ping\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(20), body.next())
            .await
            .expect("a frame or a ping")
            .expect("the stream goes on")
            .expect("bytes");
        stream.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
    }
    assert!(
        stream.starts_with("data: {\"type\":\"text\",\"delta\":\"One\"}\n\n: ping\n\n"),
        "{stream:?}"
    );
    assert!(!frames(&stream).iter().any(is_terminal), "{stream:?}");
    let busy = post(&url, &json!({"session": "quiet", "text": "me too"}))
        .send()
        .await
        .expect("POST invoke");
    assert_eq!(busy.status(), 200);
    assert_eq!(
        frames(&busy.text().await.expect("the stream")),
        [
            json!({"type": "failed", "details": "the session \"quiet\" has a turn running",
            "retryable": true, "code": "session_busy"})
        ]
    );
    drop(body);
    assert!(
        rig.model.until_closed(1, MODEL_CLOSED_WITHIN).await,
        "the model's request is still open {MODEL_CLOSED_WITHIN:?} after the client left"
    );
    let again = post(&url, &json!({"session": "quiet", "text": "again"}))
        .send()
        .await
        .expect("POST invoke");
    assert!(
        rig.model.until_opened(2, Duration::from_secs(20)).await,
        "the session's next turn asks the model"
    );
    drop(again);
}
