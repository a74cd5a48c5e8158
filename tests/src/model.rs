//! A Chat Completions server on loopback for agents' tests: it answers requests in order from a
//! queue of scripted answers, keeps every request body, and counts the hanging answers it has
//! held open and those whose client closed the connection.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::watch;

/// One scripted answer.
pub enum Answer {
    /// A stream of these `delta`s, then `[DONE]`.
    Stream(Vec<Value>),
    /// This HTTP status, no stream.
    Status(u16),
    /// No answer, not even its headers, until the client goes away.
    Hang,
    /// A stream of these `delta`s, then nothing more until the client goes away.
    HangAfter(Vec<Value>),
}

/// How many hanging answers ([`Answer::Hang`], [`Answer::HangAfter`]) the server has held open,
/// and how many of those its clients have closed, since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hanging {
    /// Hanging answers whose request arrived.
    pub opened: usize,
    /// Hanging answers whose client closed the connection.
    pub closed: usize,
}

/// The server's state: answers to give, requests seen, hanging answers.
pub struct Model {
    answers: Mutex<VecDeque<Answer>>,
    /// Every request body, in order.
    pub requests: Mutex<Vec<Value>>,
    hanging: watch::Sender<Hanging>,
}

impl Model {
    /// How many hanging answers are held open now.
    pub fn held(&self) -> usize {
        let hanging = *self.hanging.borrow();
        hanging.opened - hanging.closed
    }

    /// Waits until `n` hanging answers have been opened in all; false if that takes over
    /// `bound`.
    pub async fn until_opened(&self, n: usize, bound: Duration) -> bool {
        self.until(bound, |h| h.opened >= n).await
    }

    /// Waits until `n` hanging answers have been closed by their clients in all; false if that
    /// takes over `bound`.
    pub async fn until_closed(&self, n: usize, bound: Duration) -> bool {
        self.until(bound, |h| h.closed >= n).await
    }

    async fn until(&self, bound: Duration, done: impl FnMut(&Hanging) -> bool) -> bool {
        let mut hanging = self.hanging.subscribe();
        tokio::time::timeout(bound, hanging.wait_for(done))
            .await
            .is_ok_and(|seen| seen.is_ok())
    }
}

/// One hanging answer held open, for as long as it lives: the server drops it with the request's
/// handler, or with the answer's body, when the client closes the connection.
struct Held(Arc<Model>);

impl Held {
    fn new(model: &Arc<Model>) -> Self {
        model.hanging.send_modify(|h| h.opened += 1);
        Self(model.clone())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.hanging.send_modify(|h| h.closed += 1);
    }
}

fn frames(deltas: &[Value]) -> String {
    deltas
        .iter()
        .map(|d| {
            let chunk = json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
            format!("data: {chunk}\n\n")
        })
        .collect()
}

fn sse(deltas: &[Value]) -> String {
    let mut text = frames(deltas);
    text.push_str("data: [DONE]\n\n");
    text
}

const AN_HOUR: Duration = Duration::from_secs(3600);

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
            let _held = Held::new(&model);
            tokio::time::sleep(AN_HOUR).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        Some(Answer::HangAfter(deltas)) => {
            let held = Held::new(&model);
            let first = Bytes::from(frames(&deltas));
            let body = futures::stream::once(async move { Ok::<_, Infallible>(first) }).chain(
                futures::stream::once(async move {
                    let _held = held;
                    tokio::time::sleep(AN_HOUR).await;
                    Ok(Bytes::new())
                }),
            );
            (
                [("content-type", "text/event-stream")],
                Body::from_stream(body),
            )
                .into_response()
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
        hanging: watch::Sender::new(Hanging::default()),
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
