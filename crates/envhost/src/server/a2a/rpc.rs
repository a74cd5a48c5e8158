//! `POST {base}/a2a`: A2A 0.3.0's JSON-RPC methods as a2a-sdk's server answers them
//! (docs/agent-env.md#json-rpc): `message/send` (blocking or not), `message/stream` and
//! `tasks/resubscribe` (Server-Sent Events, one JSON-RPC answer per frame), `tasks/get`,
//! `tasks/cancel`. Errors are JSON-RPC error objects with A2A's codes, HTTP 200.

use std::sync::Arc;
use std::time::Duration;

use a2a_types::{MessageSendConfiguration, MessageSendParams, Task, TaskIdParams, TaskQueryParams};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt as _;
use http::{HeaderName, StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::convert::Infallible;
use tokio::sync::mpsc;

use super::deployment::{Deployment, lock};
use super::run::{self, Started};
use super::tasks::{CancelError, Update, with_history_length};
use super::wire;
use crate::server::state::AppState;

/// A JSON-RPC error: the request's id (none for a body that is not JSON-RPC), its code, message
/// and data.
struct RpcError {
    id: Option<Box<Value>>,
    code: i64,
    message: String,
    data: Option<Box<Value>>,
}

impl RpcError {
    fn new(id: &Value, code: i64, message: impl Into<String>) -> Self {
        Self {
            id: Some(Box::new(id.clone())),
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602 Invalid parameters` with `detail` as its data, in pydantic's shape.
    fn invalid_params(id: &Value, detail: impl Into<String>) -> Self {
        Self {
            data: Some(Box::new(
                json!([{"type": "value_error", "loc": ["params"], "msg": detail.into()}]),
            )),
            ..Self::new(id, code::INVALID_PARAMS, "Invalid parameters")
        }
    }

    /// `-32600 Request payload validation error` with `detail` as its data.
    fn invalid_request(id: Option<&Value>, detail: &str) -> Self {
        Self {
            id: id.cloned().map(Box::new),
            code: code::INVALID_REQUEST,
            message: "Request payload validation error".into(),
            data: Some(Box::new(
                json!([{"type": "value_error", "loc": [], "msg": detail}]),
            )),
        }
    }

    fn to_json(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = (**data).clone();
        }
        let mut answer = json!({"jsonrpc": "2.0", "error": error});
        if let Some(id) = &self.id {
            answer["id"] = (**id).clone();
        }
        answer
    }

    fn into_response(self) -> Response {
        wire::json(StatusCode::OK, self.to_json())
    }
}

/// JSON-RPC's and A2A's error codes.
mod code {
    pub const PARSE: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    pub const UNSUPPORTED: i64 = -32004;
}

fn success(id: &Value, result: Value) -> Response {
    wire::json(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

fn to_value(task: &Task) -> Value {
    serde_json::to_value(task).unwrap_or(Value::Null)
}

/// `params` read as `T`; a part without `kind` is a text part, as a2a-sdk reads it.
fn params<T: DeserializeOwned>(id: &Value, params: Option<Value>) -> Result<T, RpcError> {
    let Some(mut params) = params else {
        return Err(RpcError::invalid_params(id, "Field required: params"));
    };
    if let Some(Value::Array(parts)) = params.pointer_mut("/message/parts") {
        for part in parts.iter_mut().filter_map(Value::as_object_mut) {
            if !part.contains_key("kind") && part.contains_key("text") {
                part.insert("kind".into(), "text".into());
            }
        }
    }
    serde_json::from_value(params).map_err(|e| RpcError::invalid_params(id, e.to_string()))
}

/// The name a2a-sdk gives `state` in messages: `TaskState.completed`.
fn state_name(state: &a2a_types::TaskState) -> String {
    let name = serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    format!("TaskState.{}", name.replace('-', "_"))
}

/// `-32602` for a task that has ended, as a2a-sdk words it.
fn terminal(id: &Value, task: &Task) -> RpcError {
    let state = serde_json::to_value(&task.status.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    RpcError::new(
        id,
        code::INVALID_PARAMS,
        format!("Task {} is in terminal state: {state}", task.id),
    )
}

/// How often a quiet stream gets a comment, so that proxies keep it open.
const STREAM_PING: Duration = Duration::from_secs(15);

/// The answer to one `/a2a` request of `deployment`'s.
pub async fn handle(state: AppState, deployment: Arc<Deployment>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(e) => {
            let error = RpcError {
                id: None,
                code: code::PARSE,
                message: e.to_string(),
                data: None,
            };
            return error.into_response();
        }
    };
    let Value::Object(mut request) = request else {
        return RpcError::invalid_request(None, "the request must be a JSON object")
            .into_response();
    };
    let id = request.remove("id").unwrap_or(Value::Null);
    let integer = |n: &serde_json::Number| n.is_i64() || n.is_u64();
    if !matches!(&id, Value::Null | Value::String(_)) && !id.as_number().is_some_and(integer) {
        return RpcError::invalid_request(None, "id must be a string, an integer or null")
            .into_response();
    }
    if request.get("jsonrpc").is_some_and(|v| v != "2.0") {
        return RpcError::invalid_request(Some(&id), "jsonrpc must be '2.0'").into_response();
    }
    let Some(Value::String(method)) = request.remove("method") else {
        return RpcError::invalid_request(Some(&id), "method is a required string").into_response();
    };
    let raw = request.remove("params");
    let answered = match method.as_str() {
        "message/send" => send(&state, &deployment, &id, raw).await,
        "message/stream" => stream(&state, &deployment, &id, raw),
        "tasks/get" => get(&deployment, &id, raw),
        "tasks/cancel" => cancel(&deployment, &id, raw),
        "tasks/resubscribe" => Ok(resubscribe(&deployment, &id, raw)),
        "tasks/pushNotificationConfig/set"
        | "tasks/pushNotificationConfig/get"
        | "tasks/pushNotificationConfig/list"
        | "tasks/pushNotificationConfig/delete" => Err(RpcError::new(
            &id,
            code::UNSUPPORTED,
            "This operation is not supported",
        )),
        "agent/getAuthenticatedExtendedCard" => Err(RpcError::new(
            &id,
            code::INTERNAL,
            "Authenticated card not supported",
        )),
        _ => Err(RpcError::new(
            &id,
            code::METHOD_NOT_FOUND,
            "Method not found",
        )),
    };
    answered.unwrap_or_else(RpcError::into_response)
}

/// The checks a2a-sdk makes of a message before it starts a task.
fn check_message(
    deployment: &Deployment,
    id: &Value,
    message: &a2a_types::Message,
) -> Result<(), RpcError> {
    if message.parts.is_empty() {
        return Err(RpcError::new(
            id,
            code::INVALID_PARAMS,
            "Message parts cannot be empty",
        ));
    }
    if let Some(task_id) = &message.task_id {
        let tasks = lock(&deployment.tasks);
        return Err(match tasks.get(task_id) {
            None => RpcError::new(
                id,
                code::TASK_NOT_FOUND,
                format!("Task {task_id} was specified but does not exist"),
            ),
            Some(entry) if entry.is_terminal() => terminal(id, &entry.task),
            Some(_) => RpcError::new(id, code::UNSUPPORTED, "This operation is not supported"),
        });
    }
    Ok(())
}

/// Starts the task `message/send` or `message/stream` asks for: its params read and its
/// message checked; `watch` asks for its updates.
fn start(
    state: &AppState,
    deployment: &Arc<Deployment>,
    id: &Value,
    raw: Option<Value>,
    watch: impl FnOnce(&MessageSendConfiguration) -> bool,
) -> Result<(Started, MessageSendConfiguration), RpcError> {
    let params: MessageSendParams = params(id, raw)?;
    check_message(deployment, id, &params.message)?;
    let configuration = params.configuration.unwrap_or_default();
    let watch = watch(&configuration);
    let started = run::start(state, deployment, params.message, watch)
        .map_err(|e| RpcError::new(id, code::INVALID_PARAMS, e.0))?;
    Ok((started, configuration))
}

async fn send(
    state: &AppState,
    deployment: &Arc<Deployment>,
    id: &Value,
    raw: Option<Value>,
) -> Result<Response, RpcError> {
    let (started, configuration) =
        start(state, deployment, id, raw, |c| c.blocking != Some(false))?;
    if let Some(mut updates) = started.updates {
        while let Some(update) = updates.recv().await {
            if is_final(&update) {
                break;
            }
        }
    }
    let task = lock(&deployment.tasks)
        .get(&started.task_id)
        .map_or(started.task, |entry| entry.task.clone());
    let task = with_history_length(task, configuration.history_length);
    Ok(success(id, to_value(&task)))
}

fn is_final(update: &Update) -> bool {
    matches!(update, Update::Status(status) if status.is_final)
}

fn get(deployment: &Deployment, id: &Value, raw: Option<Value>) -> Result<Response, RpcError> {
    let query: TaskQueryParams = params(id, raw)?;
    let tasks = lock(&deployment.tasks);
    let entry = tasks
        .get(&query.id)
        .ok_or_else(|| RpcError::new(id, code::TASK_NOT_FOUND, "Task not found"))?;
    let task = with_history_length(entry.task.clone(), query.history_length);
    Ok(success(id, to_value(&task)))
}

fn cancel(deployment: &Deployment, id: &Value, raw: Option<Value>) -> Result<Response, RpcError> {
    let target: TaskIdParams = params(id, raw)?;
    match lock(&deployment.tasks).cancel(&target.id) {
        Ok(task) => Ok(success(id, to_value(&task))),
        Err(CancelError::NotFound) => {
            Err(RpcError::new(id, code::TASK_NOT_FOUND, "Task not found"))
        }
        Err(CancelError::NotCancelable(state)) => Err(RpcError::new(
            id,
            code::TASK_NOT_CANCELABLE,
            format!(
                "Task cannot be canceled - current state: {}",
                state_name(&state)
            ),
        )),
    }
}

fn stream(
    state: &AppState,
    deployment: &Arc<Deployment>,
    id: &Value,
    raw: Option<Value>,
) -> Result<Response, RpcError> {
    let (started, _) = start(state, deployment, id, raw, |_| true)?;
    Ok(events(id, Some(to_value(&started.task)), started.updates))
}

/// `tasks/resubscribe`: the task's updates from now on, as SSE; an unknown or ended task is
/// one error frame.
fn resubscribe(deployment: &Deployment, id: &Value, raw: Option<Value>) -> Response {
    let watched = params::<TaskIdParams>(id, raw).and_then(|target| {
        let watched = lock(&deployment.tasks).watch(&target.id);
        match watched {
            None => Err(RpcError::new(id, code::TASK_NOT_FOUND, "Task not found")),
            Some((task, None)) => Err(terminal(id, &task)),
            Some((_, Some(updates))) => Ok(updates),
        }
    });
    match watched {
        Ok(updates) => events(id, None, Some(updates)),
        Err(error) => sse(futures::stream::once(async move {
            Ok(Bytes::from(frame(error.to_json())))
        })),
    }
}

/// One SSE frame of `answer`.
fn frame(answer: Value) -> Vec<u8> {
    let mut bytes = b"data: ".to_vec();
    bytes.extend(wire::encode(answer));
    bytes.extend_from_slice(b"\r\n\r\n");
    bytes
}

/// An SSE answer: `first` when given, then each of `updates` until the final one, every frame
/// a JSON-RPC answer with `id`; a comment every [`STREAM_PING`] while quiet.
fn events(
    id: &Value,
    first: Option<Value>,
    updates: Option<mpsc::UnboundedReceiver<Update>>,
) -> Response {
    let answer = {
        let id = id.clone();
        move |result: Value| {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            Ok::<_, Infallible>(Bytes::from(frame(answer)))
        }
    };
    let head = futures::stream::iter(first.map(answer.clone()));
    let Some(updates) = updates else {
        return sse(head);
    };
    let mut finished = false;
    let rest = futures::stream::unfold(updates, |mut updates| async move {
        updates.recv().await.map(|update| (update, updates))
    })
    .take_while(move |update| {
        let go_on = !finished;
        finished |= is_final(update);
        async move { go_on }
    })
    .map(move |update| answer(update.to_json()));
    sse(head.chain(with_pings(rest)))
}

/// A `text/event-stream` answer of `frames`, as sse-starlette sends one.
fn sse<S>(frames: S) -> Response
where
    S: futures::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(frames),
    )
        .into_response()
}

/// `frames` with `: ping` comments every [`STREAM_PING`] while none comes, ending with them.
fn with_pings<S>(frames: S) -> impl futures::Stream<Item = Result<Bytes, Infallible>>
where
    S: futures::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    let ticks = tokio::time::interval_at(tokio::time::Instant::now() + STREAM_PING, STREAM_PING);
    futures::stream::unfold(
        (frames.boxed(), ticks),
        |(mut frames, mut ticks)| async move {
            tokio::select! {
                frame = frames.next() => frame.map(|f| (f, (frames, ticks))),
                _ = ticks.tick() => Some((Ok(Bytes::from_static(b": ping\r\n\r\n")), (frames, ticks))),
            }
        },
    )
}
