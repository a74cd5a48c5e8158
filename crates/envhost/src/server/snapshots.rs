//! Snapshots over HTTP: `POST {episode}/snapshot`, `POST {episode}/fork`, and `/snapshots`
//! (list, upload, download, delete, restore into a new episode). The file format is
//! `docs/snapshots.md`'s.

use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

use super::episodes::{episode_url, locations};
use super::prefix::UrlPrefix;
use super::reply;
use super::state::{AppState, Current, Id};
use crate::embedding::{Episode, SnapshotError};

/// Where a snapshot's file is served, after `prefix`.
pub fn snapshot_url(prefix: &UrlPrefix, id: &str) -> String {
    prefix.url(&format!("/snapshots/{id}"))
}

fn snapshot_summary(prefix: &UrlPrefix, id: &str) -> Value {
    json!({"snapshot": id, "url": snapshot_url(prefix, id)})
}

fn episode_created(prefix: &UrlPrefix, episode: &Episode, snapshot: &str) -> Response {
    let mut body = locations(prefix, episode);
    body.insert("snapshot".into(), snapshot.into());
    let mut response = reply::json(StatusCode::CREATED, &body);
    if let Ok(location) = HeaderValue::from_str(&episode_url(prefix, episode.id())) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// The coded error of `e`: 404 `snapshot_not_found`, 400 `invalid_snapshot`, 409
/// `component_mismatch`, 409 `replay_diverged` (naming the journal entry), 503
/// `too_many_snapshots` / `too_many_episodes` / `unavailable`, 429 `busy` (the last three with
/// `Retry-After`), 500 `image_failed`.
pub fn snapshot_error(e: &SnapshotError) -> Response {
    reply::coded_retry(&e.to_coded())
}

/// `POST {episode}/snapshot` → `201 {"snapshot", "url"}`: the episode as of every call made
/// before this request.
pub async fn take(State(state): State<AppState>, Current(episode): Current) -> Response {
    match state.host.snapshot(&episode).await {
        Ok(id) => reply::json(
            StatusCode::CREATED,
            &snapshot_summary(&state.url_prefix, &id),
        ),
        Err(e) => snapshot_error(&e),
    }
}

/// `POST {episode}/fork` → `201 {"id", "environment", "url", "snapshot"}`: a new episode in the
/// episode's state, and the snapshot it was restored from.
pub async fn fork(State(state): State<AppState>, Current(episode): Current) -> Response {
    match state.host.fork(&episode).await {
        Ok((snapshot, fork)) => episode_created(&state.url_prefix, &fork, &snapshot),
        Err(e) => snapshot_error(&e),
    }
}

/// `GET /snapshots` → `{"snapshots": [{"snapshot", "url"}, ...]}`.
pub async fn list(State(state): State<AppState>) -> Response {
    let snapshots: Vec<Value> = state
        .host
        .snapshot_ids()
        .iter()
        .map(|id| snapshot_summary(&state.url_prefix, id))
        .collect();
    reply::json(StatusCode::OK, &json!({"snapshots": snapshots}))
}

/// `POST /snapshots` with a snapshot file as the body → `201 {"snapshot", "url"}`; 400
/// `invalid_snapshot`, 409 `component_mismatch` when this host does not serve its component.
pub async fn upload(State(state): State<AppState>, body: Bytes) -> Response {
    match state.host.import_snapshot(&body) {
        Ok(id) => reply::json(
            StatusCode::CREATED,
            &snapshot_summary(&state.url_prefix, &id),
        ),
        Err(e) => snapshot_error(&e),
    }
}

/// `GET /snapshots/{id}` → the snapshot file (`application/json`), or 404.
pub async fn download(State(state): State<AppState>, Id(id): Id) -> Response {
    match state.host.snapshot_by_id(&id) {
        Some(snapshot) => {
            let mut response = Response::new(axum::body::Body::from(snapshot.to_file()));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        None => snapshot_error(&SnapshotError::Unknown(id)),
    }
}

/// `DELETE /snapshots/{id}` → `{"snapshot", "deleted": true}`, or 404.
pub async fn delete(State(state): State<AppState>, Id(id): Id) -> Response {
    if state.host.delete_snapshot(&id) {
        reply::json(StatusCode::OK, &json!({"snapshot": id, "deleted": true}))
    } else {
        snapshot_error(&SnapshotError::Unknown(id))
    }
}

/// `POST /snapshots/{id}/episodes` → `201 {"id", "environment", "url", "snapshot"}`: a new
/// episode restored from the snapshot; 409 `replay_diverged` naming the first call whose
/// answer differs.
pub async fn restore(State(state): State<AppState>, Id(id): Id) -> Response {
    match state.host.restore(&id).await {
        Ok(episode) => episode_created(&state.url_prefix, &episode, &id),
        Err(e) => snapshot_error(&e),
    }
}
