//! The host's side of the contract, with `guests/conformance-agent` (whose prompt picks what it
//! does: `complete`, `fail`, `trap`, `spin`, `citation`, `reserved`, `bad-json`): the host as
//! the terminal consumer (`collect`) and the relay (the SSE route), the terminals it makes of
//! traps, deadlines and protocol violations, and the HTTP route's refusals.

use std::time::{Duration, Instant};

use envhost::AgentConfig;
use envhost::agent::{AgentFailure, Collected};
use envhost::runtime::Limits;
use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::rig::{AGENT, Rig, post};
use crate::spec::FREED_WITHIN;

/// A rig of conformance-agent with `limits` (it never calls the model).
async fn conformance(limits: Limits) -> Rig {
    let mut agent = AgentConfig::new(AGENT, envhost_tests::guest("conformance_agent"), "slack");
    agent.limits = limits;
    Rig::start(agent, Vec::new()).await
}

/// MUST 1 and 2 as the host maps them: the guest's ok is the one `completed` (with its data),
/// its err the one `failed`, as the guest made it.
#[tokio::test]
async fn must_1_and_2_the_guests_answer_is_the_one_terminal() {
    let rig = conformance(Limits::default()).await;
    assert_eq!(
        rig.drain("complete", "complete").await,
        [
            json!({"type": "text", "delta": "ok"}),
            json!({"type": "completed", "data": {"n": 1}})
        ]
    );
    assert_eq!(
        rig.drain("fail", "fail").await,
        [json!({"type": "failed", "details": "asked to fail", "retryable": true, "code": "asked"})]
    );
}

/// MUST 4 and row 11: `collect`, a terminal consumer, ignores the extension event `citation`
/// that the stream carries.
#[tokio::test]
async fn must_4_a_terminal_consumer_ignores_unknown_events() {
    let rig = conformance(Limits::default()).await;
    let events = rig.drain("relayed", "citation").await;
    assert_eq!(
        events,
        [
            json!({"type": "citation", "url": "https://example.org"}),
            json!({"type": "completed", "data": {"n": 1}})
        ]
    );
    assert_eq!(
        rig.collect("collected", "citation").await,
        Ok(Collected {
            text: String::new(),
            data: Some(json!({"n": 1}))
        })
    );
}

/// MUST 5 and row 11: the SSE route, a relay, passes the extension event on byte for byte as
/// the JSON object the guest emitted, before the terminal.
#[tokio::test]
async fn must_5_unknown_events_are_relayed_unchanged() {
    let rig = conformance(Limits::default()).await;
    let url = rig.serve(Duration::from_secs(30)).await;
    let stream = post(&url, &json!({"session": "relay", "text": "citation"}))
        .send()
        .await
        .expect("POST invoke")
        .text()
        .await
        .expect("the stream");
    assert_eq!(
        stream,
        "data: {\"type\":\"citation\",\"url\":\"https://example.org\"}\n\n\
         data: {\"type\":\"completed\",\"data\":{\"n\":1}}\n\n"
    );
}

/// Row 8: a trap after an event is that event, then `failed{code: "agent_trap", retryable:
/// false}` whose details are one line without a backtrace.
#[tokio::test]
async fn row_8_a_trap_is_agent_trap_after_the_text_before_it() {
    let rig = conformance(Limits::default()).await;
    let events = rig.drain("trap", "trap").await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], json!({"type": "text", "delta": "before"}));
    assert_eq!(events[1]["code"], "agent_trap");
    assert_eq!(events[1]["retryable"], false);
    let details = events[1]["details"].as_str().expect("details");
    assert!(
        !details.is_empty() && !details.contains('\n') && !details.contains("backtrace"),
        "{details:?}"
    );
}

/// Row 9: a guest spinning without calling an import is `failed{code: "deadline_exceeded"}`
/// at its CPU deadline; when its consumer leaves, it is stopped (its session free) within
/// [`FREED_WITHIN`].
#[tokio::test]
async fn row_9_a_spin_is_deadline_exceeded_or_stopped_when_its_consumer_leaves() {
    let rig = conformance(Limits {
        cpu_deadline: Duration::from_millis(300),
        ..Limits::default()
    })
    .await;
    let started = Instant::now();
    let events = rig.drain("spin", "spin").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["code"], "deadline_exceeded", "{events:?}");
    assert!(started.elapsed() < Duration::from_secs(5));

    let spinning = rig.invoke("left", "spin");
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(spinning);
    let left = Instant::now();
    let (freed, next) = rig
        .until_free("left", "complete", left, FREED_WITHIN)
        .await
        .unwrap_or_else(|| panic!("the spin still holds its session {FREED_WITHIN:?} on"));
    println!("a spinning turn's session was freed after {freed:?}");
    assert_eq!(next.collect().await.map(|c| c.text), Ok("ok".to_owned()));
}

/// Row 10: an extension event named like a terminal, or whose body is not JSON, ends the turn
/// with one `failed{code: "protocol_violation"}`, never a second terminal.
#[tokio::test]
async fn row_10_a_reserved_name_or_bad_json_is_a_protocol_violation() {
    let rig = conformance(Limits::default()).await;
    for text in ["reserved", "bad-json"] {
        let events = rig.drain(text, text).await;
        assert_eq!(events.len(), 1, "{text}: {events:?}");
        assert_eq!(events[0]["code"], "protocol_violation", "{text}");
        assert_eq!(events[0]["retryable"], false, "{text}");
    }
}

/// Row 13: `collect` answers the text and `completed`'s data, or the `failed` terminal with its
/// details, retryable and code; the route's buffered answer (`Accept: application/json`) is the
/// same.
#[tokio::test]
async fn row_13_collect_and_the_buffered_answer() {
    let rig = conformance(Limits::default()).await;
    assert_eq!(
        rig.collect("c-ok", "complete").await,
        Ok(Collected {
            text: "ok".into(),
            data: Some(json!({"n": 1}))
        })
    );
    assert_eq!(
        rig.collect("c-fail", "fail").await,
        Err(AgentFailure {
            details: "asked to fail".into(),
            retryable: true,
            code: Some("asked".into())
        })
    );
    let url = rig.serve(Duration::from_secs(30)).await;
    for (text, answer) in [
        ("complete", json!({"text": "ok", "data": {"n": 1}})),
        (
            "fail",
            json!({"failed": {"details": "asked to fail", "retryable": true, "code": "asked"}}),
        ),
    ] {
        let buffered: Value = post(&url, &json!({"session": "b", "text": text}))
            .header("accept", "application/json")
            .send()
            .await
            .expect("POST invoke")
            .json()
            .await
            .expect("a JSON answer");
        assert_eq!(buffered, answer);
    }
}

/// Row 16: the route's refusals, as the reference handler's: 405 with `Allow: POST`, 415
/// without `application/json`, 413 for a body over 1 MiB in bytes, 400 naming the bad field,
/// 404 for an unknown agent; none of them starts a turn of its session.
#[tokio::test]
async fn row_16_http_refusals() {
    let rig = conformance(Limits::default()).await;
    let url = rig.serve(Duration::from_secs(30)).await;
    let client = reqwest::Client::new();
    let get = client.get(&url).send().await.expect("GET invoke");
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST");
    let plain = client
        .post(&url)
        .header("content-type", "text/plain")
        .body(r#"{"session": "s", "text": "complete"}"#)
        .send()
        .await
        .expect("POST invoke");
    assert_eq!(plain.status(), 415);
    // Fewer than 1 Mi characters, but over 1 MiB of UTF-8.
    let huge = json!({"session": "s", "text": "é".repeat((1 << 19) + 1)});
    let huge = post(&url, &huge).send().await.expect("POST invoke");
    assert_eq!(huge.status(), 413);
    for (body, message) in [
        (json!([]), "the body must be a JSON object"),
        (
            json!({"text": "complete"}),
            "session is a required non-empty string",
        ),
        (json!({"session": "s"}), "text is a required string"),
        (
            json!({"session": "s", "text": 3}),
            "text must be a string, got 3",
        ),
        (
            json!({"session": "s".repeat(201), "text": "complete"}),
            "session is at most 200 bytes, got 201",
        ),
        (
            json!({"session": "s", "text": "complete", "images": "a.png"}),
            "images must be a list, got \"a.png\"",
        ),
        (
            json!({"session": "s", "text": "complete", "branchHints": [7]}),
            "branchHints must be strings, got 7",
        ),
    ] {
        let response = post(&url, &body).send().await.expect("POST invoke");
        assert_eq!(response.status(), 400, "{body}");
        let error: Value = response.json().await.expect("a JSON error");
        assert_eq!(error["error"]["message"], message, "{body}");
    }
    let unknown = post(
        &url.replace("/subject/", "/nobody/"),
        &json!({"session": "s", "text": "complete"}),
    )
    .send()
    .await
    .expect("POST invoke");
    assert_eq!(unknown.status(), 404);
    let mut ok = post(&url, &json!({"session": "s", "text": "complete"}))
        .send()
        .await
        .expect("POST invoke")
        .bytes_stream();
    let first = ok.next().await.expect("a frame").expect("bytes");
    assert!(
        first.starts_with(b"data: {\"type\":\"text\",\"delta\":\"ok\"}\n\n"),
        "the refused requests left the session busy: {first:?}"
    );
}
