//! `POST /agents/{name}/invoke` over real HTTP on loopback: `guests/tool-agent` bound to the
//! slack root episode, a Chat Completions server on loopback as its model. The reference
//! handler's refusals (405, 413, 415, 400), the event stream's frames and heartbeat, the buffered
//! answer, `session_busy`, and a client that leaves.

use std::sync::Arc;
use std::time::Duration;

use envhost::agent::model::ModelEndpoint;
use envhost::protocol::Part;
use envhost::server::agents::{self, Agents};
use envhost::{AgentConfig, EnvironmentConfig, Host, HostConfig, server};
use envhost_tests::guest;
use envhost_tests::model::{Answer, Model, serve, tool_call};
use futures::StreamExt as _;
use serde_json::{Value, json};

/// Serves slack with the agent `tool` on loopback; answers the invoke URL and the model.
async fn start(answers: Vec<Answer>, heartbeat: Duration) -> (String, Arc<Model>) {
    let (model_url, model) = serve(answers).await;
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("slack", guest("slack"))]);
    let mut agent = AgentConfig::new("tool", guest("tool_agent"), "slack");
    agent.model = "scripted".into();
    config.agents.push(agent);
    config.model = Some(ModelEndpoint::new(&model_url, None).unwrap());
    let host = Arc::new(Host::new(config).await.unwrap());
    let (router, state) = server::app(host.clone(), server::DEFAULT_MAX_BODY_BYTES)
        .await
        .unwrap();
    let seed = json!({"channels": [{"name": "general", "topic": ""}], "messages": []});
    state
        .root
        .add_data(vec![
            serde_json::from_value::<Part>(json!({"kind": "data", "data": seed})).unwrap(),
        ])
        .await
        .unwrap();
    let agents = agents::router(Agents {
        host,
        root: state.root.clone(),
        heartbeat,
    });
    let app = router.merge(agents);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/agents/tool/invoke",
        listener.local_addr().unwrap()
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, model)
}

fn post(url: &str, body: &Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
}

/// The `data:` frames of an event stream, as JSON.
fn frames(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|frame| frame.strip_prefix("data: "))
        .map(|json| serde_json::from_str(json).unwrap())
        .collect()
}

#[tokio::test]
async fn a_turn_streams_its_events_as_data_frames_and_ends_with_one_terminal() {
    let args = json!({"channel": "general", "text": "from http"});
    let (url, _) = start(
        vec![
            Answer::Stream(vec![tool_call("c1", "slack_send_message", &args)]),
            Answer::Stream(vec![json!({"content": "Sent."})]),
        ],
        Duration::from_secs(30),
    )
    .await;
    let response = post(&url, &json!({"session": "h1", "text": "send it"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = frames(&response.text().await.unwrap());
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["tool_started", "tool_ended", "text", "completed"]);
    assert_eq!(events[0]["args"], args);
}

#[tokio::test]
async fn the_buffered_answer_is_collect() {
    let (url, _) = start(
        vec![
            Answer::Stream(vec![json!({"content": "Hel"}), json!({"content": "lo"})]),
            Answer::Status(400),
        ],
        Duration::from_secs(30),
    )
    .await;
    let ok: Value = post(&url, &json!({"session": "b1", "text": "hi"}))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ok, json!({"text": "Hello", "data": null}));
    let failed: Value = post(&url, &json!({"session": "b2", "text": "hi"}))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(failed["failed"]["code"], "model_refused");
    assert_eq!(failed["failed"]["retryable"], false);
}

#[tokio::test]
async fn bad_requests_get_the_reference_handlers_statuses() {
    let (url, _) = start(Vec::new(), Duration::from_secs(30)).await;
    let client = reqwest::Client::new();
    let get = client.get(&url).send().await.unwrap();
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST");
    let text = client
        .post(&url)
        .header("content-type", "text/plain")
        .body(r#"{"session": "s", "text": "t"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(text.status(), 415);
    let huge = json!({"session": "s", "text": "x".repeat(1 << 20)});
    assert_eq!(post(&url, &huge).send().await.unwrap().status(), 413);
    for (body, message) in [
        (json!([]), "the body must be a JSON object"),
        (
            json!({"text": "t"}),
            "session is a required non-empty string",
        ),
        (json!({"session": "s"}), "text is a required string"),
        (
            json!({"session": "s", "text": 3}),
            "text must be a string, got 3",
        ),
    ] {
        let response = post(&url, &body).send().await.unwrap();
        assert_eq!(response.status(), 400);
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["message"], message);
    }
    let unknown = post(
        &url.replace("/tool/", "/nobody/"),
        &json!({"session": "s", "text": "t"}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn a_quiet_stream_pings_a_busy_session_fails_at_once_and_a_leaving_client_frees_it() {
    let (url, _) = start(
        vec![
            Answer::Hang,
            Answer::Stream(vec![json!({"content": "Back."})]),
        ],
        Duration::from_millis(200),
    )
    .await;
    let response = post(&url, &json!({"session": "slow", "text": "wait"}))
        .send()
        .await
        .unwrap();
    let mut body = response.bytes_stream();
    let first = tokio::time::timeout(Duration::from_secs(5), body.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(&first[..], b": ping\n\n");
    let busy = post(&url, &json!({"session": "slow", "text": "me too"}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        frames(&busy),
        [
            json!({"type": "failed", "details": "the session \"slow\" has a turn running",
            "retryable": true, "code": "session_busy"})
        ]
    );
    drop(body);
    let mut freed = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let again = post(&url, &json!({"session": "slow", "text": "again"}))
            .header("accept", "application/json")
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        if again.get("text").is_some() {
            assert_eq!(again["text"], "Back.");
            freed = true;
            break;
        }
    }
    assert!(freed, "the session stayed busy after its client left");
}
