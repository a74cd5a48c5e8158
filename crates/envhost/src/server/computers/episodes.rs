//! The computers' episodes over HTTP (computer.md#episodes), each route the edge of a
//! [`Host`](crate::Host) operation:
//!
//! - `POST /episodes` (body empty or `{}`) → `201 {"id", "driver", "url", "agent_url",
//!   "mcp_url", "root": false}`: a fresh computer, in the root computer's settings now.
//! - `POST /fork`, `POST /episodes/{id}/fork` → `201 {…, "forked_from"}`: a computer in the
//!   state of the root or of that episode.
//! - `GET /episodes` → `{"episodes": [...]}`, the root computer first (`"root": true`, its
//!   `url` `/`); `GET /episodes/{id}`; `DELETE /episodes/{id}` → `{"id", "deleted": true}` (409
//!   `root_episode` for the root).
//! - `POST /snapshot`, `POST /episodes/{id}/snapshot` → `201 {"snapshot", "url", "inputs"}`: the
//!   state kept in memory; `GET /snapshots`; `DELETE /snapshots/{id}`; `POST
//!   /snapshots/{id}/episodes` or `POST /episodes {"snapshot": id}` → `201 {…, "snapshot"}`: a
//!   computer restored from it.
//!
//! Errors: 400 `invalid_params` (a body other than `{}` or `{"snapshot": id}`), 404
//! `episode_not_found` / `snapshot_not_found`, 409 `fork_unsupported` (a driver granted a
//! display: its state is the X server's), 500 `fork_failed` (the replay faulted or no instance
//! could be made), 503 `too_many_episodes` at the cap, which counts the root (retryable, with
//! `Retry-After: 1`), and `too_many_snapshots` past [`crate::MAX_SNAPSHOTS`].

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{delete as delete_route, get, post};
use bytes::Bytes;
use http::{Method, StatusCode, header};
use serde_json::{Value, json};

use envhost_protocol::error::{CodedError, INVALID_PARAMS};

use super::current::episode_not_found;
use super::{Computers, Mount, Shared};
use crate::MAX_SNAPSHOTS;
use crate::embedding::{ComputerEpisode, ComputerError, KeptComputer};
use crate::server::access::{agent_mcp_url, agent_url};
use crate::server::reply;

/// The server's own routes: the episodes API, forks and snapshots.
pub fn mounts() -> Vec<Mount> {
    let (get_only, post_only): (&[Method], &[Method]) = (&[Method::GET], &[Method::POST]);
    vec![
        (
            "/episodes".into(),
            &[Method::POST, Method::GET],
            post(create).get(list),
        ),
        (
            "/episodes/{id}".into(),
            &[Method::GET, Method::DELETE],
            get(show).delete(delete),
        ),
        ("/episodes/{id}/fork".into(), post_only, post(fork_episode)),
        (
            "/episodes/{id}/snapshot".into(),
            post_only,
            post(snapshot_episode),
        ),
        ("/fork".into(), post_only, post(fork_root)),
        ("/snapshot".into(), post_only, post(snapshot_root)),
        ("/snapshots".into(), get_only, get(list_snapshots)),
        (
            "/snapshots/{id}".into(),
            &[Method::DELETE],
            delete_route(delete_snapshot),
        ),
        (
            "/snapshots/{id}/episodes".into(),
            post_only,
            post(restore_route),
        ),
    ]
}

/// `error`'s answer over HTTP: its coded error, worded for this server where the embedding
/// API's words are the host's (the cap, the snapshots kept), a computer that cannot start being
/// `fork_failed`; `Retry-After: 1` when it is retryable.
fn refused(error: &ComputerError) -> Response {
    let coded = match error {
        ComputerError::Full { max } => {
            let mut full = CodedError::new(
                "too_many_episodes",
                format!("the server holds as many computers as it may: {max}, the root counted"),
            );
            full.status = 503;
            full.retryable = true;
            full
        }
        ComputerError::TooManySnapshots => {
            let mut full = CodedError::new(
                "too_many_snapshots",
                format!(
                    "the server keeps its maximum of {MAX_SNAPSHOTS} snapshots; delete one first"
                ),
            );
            full.status = 503;
            full
        }
        ComputerError::Start(_) => {
            let mut failed = CodedError::new("fork_failed", error.to_string());
            failed.status = 500;
            failed
        }
        other => other.to_coded(),
    };
    reply::coded_retry(&coded)
}

/// Refuses a body other than an empty one or `{}` (a fork or a snapshot takes no arguments).
fn no_arguments(body: &[u8]) -> Result<(), Response> {
    let empty = body.iter().all(u8::is_ascii_whitespace)
        || serde_json::from_slice::<Value>(body)
            .ok()
            .is_some_and(|v| v.as_object().is_some_and(serde_json::Map::is_empty));
    if empty {
        return Ok(());
    }
    let mut error = CodedError::new(INVALID_PARAMS, "this route takes an empty body or {}");
    error.status = 400;
    Err(reply::coded(&error))
}

/// `{"id", "driver", "url", "agent_url", "mcp_url", "root"}`, the URLs after the prefix.
fn summary(computers: &Computers, computer: &ComputerEpisode) -> Value {
    let prefix = &computers.url_prefix;
    let id = computer.id();
    let root = id == computers.root.id();
    let url = if root {
        "/".to_owned()
    } else {
        format!("/episodes/{id}/")
    };
    json!({
        "id": id,
        "driver": computer.catalog().driver().name(),
        "url": prefix.url(&url),
        "agent_url": prefix.url(&agent_url(id, computer.secret())),
        "mcp_url": prefix.url(&agent_mcp_url(id, computer.secret())),
        "root": root,
    })
}

/// `201` with the new computer's summary and `extra` (`forked_from` or `snapshot`, and its
/// value), with its `Location`; the refusal of `made` when it failed.
fn created(
    computers: &Computers,
    made: Result<Arc<ComputerEpisode>, ComputerError>,
    extra: Option<(&str, &str)>,
) -> Response {
    let computer = match made {
        Ok(computer) => computer,
        Err(e) => return refused(&e),
    };
    let mut body = summary(computers, &computer);
    if let Some((key, value)) = extra {
        body[key] = json!(value);
    }
    let mut response = reply::json(StatusCode::CREATED, &body);
    let location = computers
        .url_prefix
        .url(&format!("/episodes/{}/", computer.id()));
    if let Ok(location) = location.parse() {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

async fn create(State(computers): State<Shared>, body: Bytes) -> Response {
    let request = if body.iter().all(u8::is_ascii_whitespace) {
        Some(serde_json::Map::new())
    } else {
        serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v.as_object().cloned())
    };
    let snapshot = match request {
        Some(object) if object.is_empty() => None,
        Some(object)
            if object.len() == 1 && object.get("snapshot").is_some_and(Value::is_string) =>
        {
            object
                .get("snapshot")
                .and_then(Value::as_str)
                .map(str::to_owned)
        }
        _ => {
            let mut error = CodedError::new(
                INVALID_PARAMS,
                "a computer episode is created from an empty body, {} or {\"snapshot\": id}",
            );
            error.status = 400;
            return reply::coded(&error);
        }
    };
    if let Some(id) = snapshot {
        return restore(&computers, &id).await;
    }
    let root = &computers.root;
    let made = computers
        .host
        .create_computer_with(&root.catalog().name, root.computer().settings())
        .await;
    created(&computers, made, None)
}

async fn snapshot(computers: &Computers, computer: &ComputerEpisode) -> Response {
    match computers.host.snapshot_computer(computer).await {
        Ok(kept) => reply::json(StatusCode::CREATED, &snapshot_summary(computers, &kept)),
        Err(e) => refused(&e),
    }
}

async fn snapshot_root(State(computers): State<Shared>, body: Bytes) -> Response {
    if let Err(refusal) = no_arguments(&body) {
        return refusal;
    }
    snapshot(&computers, &computers.root).await
}

async fn snapshot_episode(
    State(computers): State<Shared>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Err(refusal) = no_arguments(&body) {
        return refusal;
    }
    match computers.host.computer(&id) {
        Some(computer) => snapshot(&computers, &computer).await,
        None => episode_not_found(&id),
    }
}

async fn list_snapshots(State(computers): State<Shared>) -> Response {
    let snapshots: Vec<Value> = computers
        .host
        .computer_snapshots()
        .iter()
        .map(|kept| snapshot_summary(&computers, kept))
        .collect();
    reply::json(StatusCode::OK, &json!({ "snapshots": snapshots }))
}

/// `{"snapshot", "url", "inputs"}`, the URL after the prefix.
fn snapshot_summary(computers: &Computers, kept: &KeptComputer) -> Value {
    let id = kept.id();
    let url = computers.url_prefix.url(&format!("/snapshots/{id}"));
    json!({"snapshot": id, "url": url, "inputs": kept.inputs()})
}

async fn delete_snapshot(State(computers): State<Shared>, Path(id): Path<String>) -> Response {
    if computers.host.delete_computer_snapshot(&id) {
        reply::json(StatusCode::OK, &json!({"snapshot": id, "deleted": true}))
    } else {
        refused(&ComputerError::UnknownSnapshot(id))
    }
}

async fn restore_route(
    State(computers): State<Shared>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    match no_arguments(&body) {
        Ok(()) => restore(&computers, &id).await,
        Err(refusal) => refusal,
    }
}

/// A computer restored from snapshot `id`.
async fn restore(computers: &Computers, id: &str) -> Response {
    let made = computers.host.restore_computer(id).await;
    created(computers, made, Some(("snapshot", id)))
}

async fn fork(computers: &Computers, from: &ComputerEpisode, from_id: &str) -> Response {
    let made = computers.host.fork_computer(from).await;
    created(computers, made, Some(("forked_from", from_id)))
}

async fn fork_root(State(computers): State<Shared>, body: Bytes) -> Response {
    if let Err(refusal) = no_arguments(&body) {
        return refusal;
    }
    fork(&computers, &computers.root, "root").await
}

async fn fork_episode(
    State(computers): State<Shared>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Err(refusal) = no_arguments(&body) {
        return refusal;
    }
    match computers.host.computer(&id) {
        Some(computer) => fork(&computers, &computer, &id).await,
        None => episode_not_found(&id),
    }
}

async fn list(State(computers): State<Shared>) -> Response {
    let root = &computers.root;
    let mut episodes = vec![summary(&computers, root)];
    episodes.extend(
        computers
            .host
            .computers()
            .iter()
            .filter(|c| c.id() != root.id())
            .map(|c| summary(&computers, c)),
    );
    reply::json(StatusCode::OK, &json!({ "episodes": episodes }))
}

async fn show(State(computers): State<Shared>, Path(id): Path<String>) -> Response {
    match computers.host.computer(&id) {
        Some(computer) => reply::json(StatusCode::OK, &summary(&computers, &computer)),
        None => episode_not_found(&id),
    }
}

async fn delete(State(computers): State<Shared>, Path(id): Path<String>) -> Response {
    if id == computers.root.id() {
        let mut error = CodedError::new("root_episode", "the root computer cannot be deleted");
        error.status = 409;
        return reply::coded(&error);
    }
    match computers.host.computer(&id) {
        Some(computer) if computers.host.drop_computer(&id) => {
            computers.forget(&computer);
            reply::json(StatusCode::OK, &json!({"id": id, "deleted": true}))
        }
        _ => episode_not_found(&id),
    }
}
