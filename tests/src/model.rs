//! A Chat Completions server on loopback for agents' tests: it answers requests in order from a
//! queue of scripted answers, and keeps every request body.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted answer.
pub enum Answer {
    /// A stream of these `delta`s, then `[DONE]`.
    Stream(Vec<Value>),
    /// This HTTP status, no stream.
    Status(u16),
    /// No answer for an hour.
    Hang,
}

/// The server's state: answers to give, requests seen.
#[derive(Default)]
pub struct Model {
    answers: Mutex<VecDeque<Answer>>,
    /// Every request body, in order.
    pub requests: Mutex<Vec<Value>>,
}

fn sse(deltas: &[Value]) -> String {
    let mut text: String = deltas
        .iter()
        .map(|d| {
            let chunk = json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
            format!("data: {chunk}\n\n")
        })
        .collect();
    text.push_str("data: [DONE]\n\n");
    text
}

async fn completions(State(model): State<Arc<Model>>, body: Bytes) -> Response {
    model
        .requests
        .lock()
        .unwrap()
        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    let answer = model.answers.lock().unwrap().pop_front();
    match answer {
        Some(Answer::Stream(deltas)) => {
            ([("content-type", "text/event-stream")], sse(&deltas)).into_response()
        }
        Some(Answer::Status(code)) => (
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            "scripted failure",
        )
            .into_response(),
        Some(Answer::Hang) => {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        None => (
            [("content-type", "text/event-stream")],
            sse(&[json!({"content": "(none)"})]),
        )
            .into_response(),
    }
}

/// Starts the server on a free loopback port with `answers`; answers its base URL (`.../v1`)
/// and its state.
pub async fn serve(answers: Vec<Answer>) -> (String, Arc<Model>) {
    let model = Arc::new(Model {
        answers: Mutex::new(answers.into()),
        requests: Mutex::default(),
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(model.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}/v1", listener.local_addr().expect("an address"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, model)
}

/// A streamed delta calling tool `name` with `args` as call `id`.
pub fn tool_call(id: &str, name: &str, args: &Value) -> Value {
    json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
        "function": {"name": name, "arguments": args.to_string()}}]})
}
