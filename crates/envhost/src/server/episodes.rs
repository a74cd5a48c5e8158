//! The episodes API: `POST /episodes`, `GET /episodes`, `GET` and `DELETE /episodes/{id}`, and
//! `GET /metrics`.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;
use serde_json::{Value, json};

use super::data_plane::RETRY_AFTER_SECONDS;
use super::reply;
use super::state::{AppState, Id, episode_not_found};
use crate::embedding::{CreateError, Episode};
use envhost_protocol::error::CodedError;
use envhost_protocol::extension::body_params;

/// Where an episode is served.
pub fn episode_url(id: &str) -> String {
    format!("/episodes/{id}/")
}

/// `{"id", "environment", "url", "root"}`: `root` is true for the episode served at `/`.
fn summary(state: &AppState, episode: &Episode) -> Value {
    json!({
        "id": episode.id(),
        "environment": episode.catalog().name,
        "url": episode_url(episode.id()),
        "root": episode.id() == state.root.id(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateRequest {
    /// The environment's name; the default (first) one when absent.
    environment: Option<String>,
}

/// `POST /episodes {"environment": name}` → `201 {"id", "environment", "url", "root": false}`
/// with a `Location`; 404 `environment_not_found`, 503 `too_many_episodes` (with `Retry-After`)
/// at the cap, 400 `invalid_params` for a body that is not such an object (other keys included).
pub async fn create(State(state): State<AppState>, body: Bytes) -> Response {
    let request = body_params(&body).and_then(|object| {
        CreateRequest::deserialize(Value::Object(object))
            .map_err(|e| CodedError::invalid_params(e.to_string()))
    });
    let request = match request {
        Ok(request) => request,
        Err(e) => return reply::coded(&e),
    };
    let name = request
        .environment
        .unwrap_or_else(|| state.root.catalog().name.clone());
    match state.host.create_episode(&name).await {
        Ok(episode) => {
            let mut response = reply::json(StatusCode::CREATED, &summary(&state, &episode));
            if let Ok(location) = HeaderValue::from_str(&episode_url(episode.id())) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            response
        }
        Err(e) => create_error(&e),
    }
}

fn create_error(e: &CreateError) -> Response {
    let (code, status, retryable) = match e {
        CreateError::UnknownEnvironment(_) => ("environment_not_found", 404, false),
        CreateError::Full { .. } => ("too_many_episodes", 503, true),
        CreateError::Instantiate(_) => ("unavailable", 503, true),
    };
    let mut error = CodedError::new(code, e.to_string());
    error.status = status;
    error.retryable = retryable;
    let mut response = reply::coded(&error);
    if retryable {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from_static(RETRY_AFTER_SECONDS),
        );
    }
    response
}

/// `GET /episodes` → `{"episodes": [{"id", "environment", "url", "root"}, ...]}`.
pub async fn list(State(state): State<AppState>) -> Response {
    let episodes: Vec<Value> = state
        .host
        .episodes()
        .iter()
        .map(|e| summary(&state, e))
        .collect();
    reply::json(StatusCode::OK, &json!({"episodes": episodes}))
}

/// `GET /episodes/{id}` → `{"id", "environment", "url", "root"}`, or 404.
pub async fn show(State(state): State<AppState>, Id(id): Id) -> Response {
    match state.host.episode(&id) {
        Some(episode) => reply::json(StatusCode::OK, &summary(&state, &episode)),
        None => episode_not_found(&id),
    }
}

/// `DELETE /episodes/{id}` → `{"id", "deleted": true}`, or 404. The root episode cannot be
/// deleted (409).
pub async fn delete(State(state): State<AppState>, Id(id): Id) -> Response {
    if id == state.root.id() {
        let mut error = CodedError::new("root_episode", "the root episode cannot be deleted");
        error.status = 409;
        return reply::coded(&error);
    }
    let Some(episode) = state.host.episode(&id) else {
        return episode_not_found(&id);
    };
    if state.host.drop_episode(&id) {
        state.mcp.forget(&episode);
        reply::json(StatusCode::OK, &json!({"id": id, "deleted": true}))
    } else {
        episode_not_found(&id)
    }
}

/// `GET /metrics`, in the Prometheus text format.
pub async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        state.host.metrics().encode(),
    )
        .into_response()
}
