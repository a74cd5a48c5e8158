//! trajectory/v1 (docs/agent-env.md#trajectories): `POST /ext/trajectory` reads the events of a
//! finished task (`{"task_id"}`) or of a context's tasks (`{"context_id"}`) whole, or from a
//! cursor while they run (`{"task_id" | "context_id", "after", "limit"?}`), or uploads them
//! through a grant (`{"task_id" | "context_id", "objects": {"trajectory": WriteObject}}`). A task's events are
//! `{"type": "prompt", "text"}` and then its turn's events as the Agent Handler contract writes
//! them, in the format [`FORMAT`].

use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use serde_json::{Map, Value, json};

use super::config::object_body;
use super::deployment::{Deployment, lock};
use super::tasks::{Entry, Tasks, is_terminal};
use super::wire::{self, field_error};
use crate::transfers::objects::{self, TransferError, WriteObject};

/// The format of the events: the Agent Handler contract's event objects.
pub const FORMAT: &str = "agent-handler/v1";

/// The most events one cursor read answers.
pub const MAX_READ_EVENTS: u64 = 1_000;

/// What a request asks for.
enum Target {
    Task(String),
    Context(String),
}

/// A trajectory's state as trajectory/v1 names it.
fn state_name(entry: &Entry) -> &'static str {
    use a2a_types::TaskState;
    match entry.task.status.state {
        TaskState::Submitted => "pending",
        TaskState::Completed => "completed",
        TaskState::Failed | TaskState::Rejected => "failed",
        TaskState::Canceled => "canceled",
        _ => "running",
    }
}

/// A non-negative integer field (pydantic's `StrictInt`), with its bounds.
fn strict_int(body: &Map<String, Value>, key: &str, least: u64) -> Result<Option<u64>, Value> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => match n.as_u64() {
            Some(v) if v >= least => Ok(Some(v)),
            _ => Err(field_error(
                "greater_than_equal",
                key,
                &format!("Input should be greater than or equal to {least}"),
            )),
        },
        Some(_) => Err(field_error(
            "int_type",
            key,
            "Input should be a valid integer",
        )),
    }
}

/// `POST /ext/trajectory`; `http` uploads a trajectory asked for through a grant.
pub async fn read(deployment: &Deployment, body: &Bytes, http: &reqwest::Client) -> Response {
    let body = match object_body(body) {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let extra: Vec<Value> = body
        .keys()
        .filter(|k| !["task_id", "context_id", "after", "limit", "objects"].contains(&k.as_str()))
        .map(|k| field_error("extra_forbidden", k, "Extra inputs are not permitted"))
        .collect();
    if !extra.is_empty() {
        return wire::invalid(extra);
    }
    let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_owned);
    let target = match (text("task_id"), text("context_id")) {
        (Some(task), None) => Target::Task(task),
        (None, Some(context)) => Target::Context(context),
        _ => {
            return wire::text(
                StatusCode::BAD_REQUEST,
                "request must match exactly one of variants: {task_id}, {context_id}, \
                 {task_id, after, limit?}, {context_id, after, limit?}",
            );
        }
    };
    if let Some(objects) = body.get("objects") {
        if body.contains_key("after") || body.contains_key("limit") {
            return wire::text(
                StatusCode::BAD_REQUEST,
                "objects cannot be read from a cursor",
            );
        }
        return upload(deployment, &target, objects, http).await;
    }
    let after = strict_int(&body, "after", 0);
    let limit = strict_int(&body, "limit", 1);
    match (after, limit) {
        (Ok(None), Ok(None)) => whole(deployment, &target),
        (Ok(Some(after)), Ok(limit)) => {
            let limit = limit.unwrap_or(MAX_READ_EVENTS).min(MAX_READ_EVENTS);
            cursor(deployment, &target, after, limit)
        }
        (Ok(None), Ok(Some(_))) => wire::text(StatusCode::BAD_REQUEST, "limit needs after"),
        (Err(e), _) | (_, Err(e)) => wire::invalid(vec![e]),
    }
}

/// `{"trajectory": [...]}`: a finished task's events, or those of every task of a context.
fn whole(deployment: &Deployment, target: &Target) -> Response {
    match events(deployment, target) {
        Ok(events) => wire::json_as_is(StatusCode::OK, &json!({"trajectory": events})),
        Err(refused) => refused,
    }
}

/// `{"objects": {"trajectory": {"size_bytes", "sha256"}}}`: the events of [`whole`] uploaded as
/// JSON through the `WriteObject` of `objects.trajectory` (whose media type must be
/// `application/json`); a transfer's failure is `{"error": {"code", "message", "retryable"}}`
/// with its status.
async fn upload(
    deployment: &Deployment,
    target: &Target,
    objects: &Value,
    http: &reqwest::Client,
) -> Response {
    let grant = match objects
        .get("trajectory")
        .cloned()
        .map(serde_json::from_value::<WriteObject>)
    {
        Some(Ok(grant)) if grant.media_type == "application/json" => grant,
        Some(Ok(_)) => {
            return wire::text(
                StatusCode::BAD_REQUEST,
                "trajectory object media_type must be application/json",
            );
        }
        _ => {
            return wire::text(
                StatusCode::BAD_REQUEST,
                "objects must be {\"trajectory\": WriteObject}",
            );
        }
    };
    let events = match events(deployment, target) {
        Ok(events) => events,
        Err(refused) => return refused,
    };
    let body = serde_json::to_vec(&events).unwrap_or_default();
    match objects::upload(http, &grant, body).await {
        Ok(uploaded) => wire::json_as_is(
            StatusCode::OK,
            &json!({"objects": {"trajectory": uploaded}}),
        ),
        Err(e) => transfer_failed(&e),
    }
}

/// A transfer's failure as the framework answers it.
pub fn transfer_failed(error: &TransferError) -> Response {
    let status = StatusCode::from_u16(error.status().0).unwrap_or(StatusCode::BAD_GATEWAY);
    wire::json_as_is(status, &error.body())
}

/// The tasks of context `id`, oldest first; 404 `Unknown context 'X'` when it has none.
pub fn context_entries<'a>(tasks: &'a Tasks, id: &str) -> Result<Vec<&'a Entry>, Response> {
    let entries = tasks.of_context(id);
    if entries.is_empty() {
        return Err(wire::text(
            StatusCode::NOT_FOUND,
            format!("Unknown context '{id}'"),
        ));
    }
    Ok(entries)
}

/// A finished task's events, or those of every task of a context; the 404 otherwise.
fn events(deployment: &Deployment, target: &Target) -> Result<Vec<Value>, Response> {
    let tasks = lock(&deployment.tasks);
    match target {
        Target::Task(id) => match tasks.get(id).filter(|e| is_terminal(&e.task.status.state)) {
            Some(entry) => Ok(entry.events.clone()),
            None => Err(wire::text(
                StatusCode::NOT_FOUND,
                format!("No completed trajectory available for task '{id}'"),
            )),
        },
        Target::Context(id) => Ok(context_entries(&tasks, id)?
            .iter()
            .flat_map(|e| e.events.iter().cloned())
            .collect()),
    }
}

/// `{"context_id", "task_id", "state", "format", "events", "next", "has_more"}`: up to `limit`
/// events from position `after` on.
fn cursor(deployment: &Deployment, target: &Target, after: u64, limit: u64) -> Response {
    let tasks = lock(&deployment.tasks);
    let entries: Vec<&Entry> = match target {
        Target::Task(id) => match tasks.get(id) {
            Some(entry) => vec![entry],
            None => return wire::text(StatusCode::NOT_FOUND, format!("Unknown task '{id}'")),
        },
        Target::Context(id) => match context_entries(&tasks, id) {
            Ok(entries) => entries,
            Err(refused) => return refused,
        },
    };
    let Some(last) = entries.last() else {
        return wire::text(StatusCode::NOT_FOUND, "no task");
    };
    let all: Vec<&Value> = entries.iter().flat_map(|e| e.events.iter()).collect();
    let total = all.len() as u64;
    if after > total {
        return wire::text(
            StatusCode::BAD_REQUEST,
            format!("after={after} is past the trajectory's {total} events"),
        );
    }
    let end = total.min(after.saturating_add(limit));
    let page: Vec<Value> = all[after as usize..end as usize]
        .iter()
        .map(|v| (*v).clone())
        .collect();
    wire::json_as_is(
        StatusCode::OK,
        &json!({
            "context_id": last.task.context_id,
            "task_id": last.task.id,
            "state": state_name(last),
            "format": FORMAT,
            "events": page,
            "next": end,
            "has_more": end < total,
        }),
    )
}
