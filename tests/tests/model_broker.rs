//! The chat model an agent is given, against an OpenAI-compatible Chat Completions server on
//! loopback (axum, answering by the request's model name): streamed text, reasoning and tool
//! calls assembled from fragments; each error kind; a dropped stream closing its connection.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use envhost::agent::model::{
    ChatRequest, Chunk, Message, ModelEndpoint, ModelError, Role, ToolCall, ToolSpec,
};
use futures::StreamExt as _;
use serde_json::{Value, json};

/// What the server saw, and whether a slow answer's stream was dropped.
#[derive(Default)]
struct Seen {
    body: Mutex<Value>,
    authorization: Mutex<Option<String>>,
    slow_dropped: AtomicBool,
}

/// Sets a flag when dropped: the server's body stream going away with its connection.
struct DropFlag(Arc<Seen>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.slow_dropped.store(true, Ordering::SeqCst);
    }
}

fn sse(events: &[Value]) -> String {
    let mut text: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    text
}

fn delta(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "x", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]})
}

async fn completions(State(seen): State<Arc<Seen>>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    *seen.body.lock().unwrap() = body.clone();
    *seen.authorization.lock().unwrap() = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let event_stream = [("content-type", "text/event-stream")];
    match body["model"].as_str().unwrap_or_default() {
        "streams" => {
            let events = [
                delta(
                    json!({"role": "assistant", "reasoning_content": "Think"}),
                    None,
                ),
                delta(json!({"reasoning_content": "ing."}), None),
                delta(json!({"content": "Hel"}), None),
                delta(json!({"content": "lo"}), None),
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                    "function": {"name": "slack_post", "arguments": "{\"chan"}}]}),
                    None,
                ),
                delta(
                    json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                    "function": {"name": "slack_list_inbox", "arguments": ""}}]}),
                    None,
                ),
                delta(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "nel\": \"general\"}"}}]}),
                    None,
                ),
                delta(json!({}), Some("tool_calls")),
            ];
            (event_stream, sse(&events)).into_response()
        }
        "errs-mid-stream" => {
            let events = [
                delta(json!({"content": "Par"}), None),
                json!({"error": {"message": "the worker died", "type": "server_error"}}),
            ];
            (event_stream, sse(&events)).into_response()
        }
        "limited" => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "3")],
            "slow down",
        )
            .into_response(),
        "down" => (StatusCode::SERVICE_UNAVAILABLE, "overloaded").into_response(),
        "refused" => (StatusCode::BAD_REQUEST, r#"{"error": "no such model"}"#).into_response(),
        _ => {
            let flag = DropFlag(seen.clone());
            let first = format!("data: {}\n\n", delta(json!({"content": "One"}), None));
            let stream =
                futures::stream::once(async move { Ok::<_, Infallible>(Bytes::from(first)) })
                    .chain(futures::stream::once(async move {
                        let _flag = flag;
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        Ok::<_, Infallible>(Bytes::new())
                    }));
            (event_stream, Body::from_stream(stream)).into_response()
        }
    }
}

async fn server() -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message {
            role: Role::User,
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }],
        tools: vec![ToolSpec {
            name: "slack_post".into(),
            description: "Posts a message.".into(),
            input_schema: r#"{"type": "object", "properties": {"channel": {"type": "string"}}}"#
                .into(),
        }],
        max_tokens: None,
        temperature: Some(0.0),
    }
}

async fn all(endpoint: &ModelEndpoint, model: &str) -> Result<Vec<Chunk>, ModelError> {
    let mut stream = endpoint.complete(model, &ask("hello")).await?;
    let mut chunks = Vec::new();
    while let Some(chunk) = stream.next().await? {
        chunks.push(chunk);
    }
    Ok(chunks)
}

#[tokio::test]
async fn text_reasoning_and_tool_calls_stream_in_order_with_calls_assembled() {
    let (url, seen) = server().await;
    let endpoint = ModelEndpoint::new(&url, Some("sk-test".into())).unwrap();
    let chunks = all(&endpoint, "streams").await.unwrap();
    assert_eq!(
        chunks,
        [
            Chunk::Thinking("Think".into()),
            Chunk::Thinking("ing.".into()),
            Chunk::Text("Hel".into()),
            Chunk::Text("lo".into()),
            Chunk::ToolCall(ToolCall {
                id: "call_a".into(),
                name: "slack_post".into(),
                args: r#"{"channel": "general"}"#.into(),
            }),
            Chunk::ToolCall(ToolCall {
                id: "call_b".into(),
                name: "slack_list_inbox".into(),
                args: "{}".into(),
            }),
        ]
    );
    let body = seen.body.lock().unwrap().clone();
    assert_eq!(body["model"], "streams");
    assert_eq!(body["stream"], true);
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "hello"}])
    );
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["properties"]["channel"]["type"],
        "string"
    );
    assert_eq!(
        seen.authorization.lock().unwrap().as_deref(),
        Some("Bearer sk-test")
    );
}

#[tokio::test]
async fn each_failure_is_its_error_kind() {
    let (url, _) = server().await;
    let endpoint = ModelEndpoint::new(&url, None).unwrap();
    assert_eq!(
        all(&endpoint, "limited").await.unwrap_err(),
        ModelError::RateLimited {
            retry_after_ms: 3_000
        }
    );
    let down = all(&endpoint, "down").await.unwrap_err();
    assert_eq!(down, ModelError::Unavailable("HTTP 503: overloaded".into()));
    assert!(down.retryable());
    let refused = all(&endpoint, "refused").await.unwrap_err();
    assert!(!refused.retryable());
    assert_eq!(
        refused,
        ModelError::InvalidRequest(r#"HTTP 400: {"error": "no such model"}"#.into())
    );
    let mut stream = endpoint
        .complete("errs-mid-stream", &ask("x"))
        .await
        .unwrap();
    assert_eq!(stream.next().await, Ok(Some(Chunk::Text("Par".into()))));
    assert_eq!(
        stream.next().await,
        Err(ModelError::Unavailable("the worker died".into()))
    );
    assert_eq!(stream.next().await, Ok(None));

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let unreachable = ModelEndpoint::new(&closed, None).unwrap();
    assert!(matches!(
        unreachable.complete("m", &ask("x")).await,
        Err(ModelError::Unavailable(_))
    ));
}

#[tokio::test]
async fn dropping_a_stream_closes_its_request() {
    let (url, seen) = server().await;
    let endpoint = ModelEndpoint::new(&url, None).unwrap();
    let mut stream = endpoint.complete("slow", &ask("x")).await.unwrap();
    assert_eq!(stream.next().await, Ok(Some(Chunk::Text("One".into()))));
    assert!(!seen.slow_dropped.load(Ordering::SeqCst));
    drop(stream);
    for _ in 0..200 {
        if seen.slow_dropped.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server still streams to a caller that left");
}
