//! The episodes API: `POST /episodes`, `GET /episodes`, `GET` and `DELETE /episodes/{id}`, and
//! `GET /metrics`.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::access::{agent_mcp_url, agent_url};
use super::data_plane::busy;
use super::prefix::UrlPrefix;
use super::reply;
use super::snapshots::snapshot_error;
use super::state::{AppState, Id, episode_not_found};
use crate::embedding::{CreateError, DataError, Episode, SeedError};
use envhost_protocol::error::CodedError;
use envhost_protocol::extension::body_params;
use envhost_protocol::part::parts_from_list;

/// Where an episode is served, after `prefix`.
pub fn episode_url(prefix: &UrlPrefix, id: &str) -> String {
    prefix.url(&format!("/episodes/{id}/"))
}

/// `{"id", "environment", "url", "agent_url", "mcp_url"}`: where the episode is served to the
/// operator (`url`) and to an agent (its agent URL, and that URL's MCP endpoint), each after
/// `prefix`.
pub fn locations(prefix: &UrlPrefix, episode: &Episode) -> Map<String, Value> {
    let id = episode.id();
    let secret = episode.secret();
    let mut fields = Map::new();
    fields.insert("id".into(), id.into());
    fields.insert("environment".into(), episode.catalog().name.clone().into());
    fields.insert("url".into(), episode_url(prefix, id).into());
    fields.insert(
        "agent_url".into(),
        prefix.url(&agent_url(id, secret)).into(),
    );
    fields.insert(
        "mcp_url".into(),
        prefix.url(&agent_mcp_url(id, secret)).into(),
    );
    fields
}

/// [`locations`] and `root`, true for the episode served at `/`.
fn summary(state: &AppState, episode: &Episode) -> Value {
    let mut fields = locations(&state.url_prefix, episode);
    fields.insert("root".into(), (episode.id() == state.root.id()).into());
    Value::Object(fields)
}

/// A `POST /episodes` body, its `parts` kept as their JSON text.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateRequest<'a> {
    /// The environment's name; the default (first) one when absent.
    environment: Option<String>,
    /// Parts to load with `data/add` before answering.
    #[serde(borrow)]
    parts: Option<&'a RawValue>,
    /// A snapshot to restore instead of starting empty.
    snapshot: Option<String>,
    /// Seconds the episode lives at most, whatever its calls (at least 1).
    ttl_s: Option<u64>,
}

/// Reads a `POST /episodes` body: empty, or an object with at most `environment`, `parts` and
/// `snapshot`.
fn create_request(body: &[u8]) -> Result<CreateRequest<'_>, CodedError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(CreateRequest::default());
    }
    serde_json::from_slice(body).or_else(|e| {
        body_params(body)?;
        Err(CodedError::invalid_params(e.to_string()))
    })
}

/// `POST /episodes {"environment"?: name, "parts"?: [Part, ...], "snapshot"?: id, "ttl_s"?:
/// seconds}` → `201 {"id", "environment", "url", "root": false}` with a `Location`
/// (docs/http-api.md#episodes).
/// With `parts`, the new episode has loaded them with one `data/add` before the answer; with
/// `snapshot`, it is that snapshot restored (as `POST /snapshots/{id}/episodes`); with `ttl_s`
/// (a fresh or seeded episode), it is dropped that many seconds after its creation, within the
/// second the server looks for idle episodes. Errors: 404
/// `environment_not_found`, 503 `too_many_episodes` (with `Retry-After`) at the cap, 400
/// `invalid_params` for a body that is not such an object (other keys, or both `parts` and
/// `snapshot`, included) or parts that are not valid, 422 `add_failed` when the environment
/// refuses the parts (the episode is then dropped), and a snapshot's errors as its restore
/// answers them.
pub async fn create(State(state): State<AppState>, body: Bytes) -> Response {
    let request = match create_request(&body) {
        Ok(request) => request,
        Err(e) => return reply::coded(&e),
    };
    let lifetime = match request.ttl_s {
        Some(0) => return reply::coded(&CodedError::invalid_params("ttl_s must be at least 1")),
        ttl => ttl.map(std::time::Duration::from_secs),
    };
    if let Some(snapshot) = request.snapshot {
        if lifetime.is_some() {
            let message = "ttl_s is for a fresh or seeded episode, not a restored one";
            return reply::coded(&CodedError::invalid_params(message));
        }
        if request.parts.is_some() {
            let message = "give parts or a snapshot, not both";
            return reply::coded(&CodedError::invalid_params(message));
        }
        return restore(&state, request.environment.as_deref(), &snapshot).await;
    }
    let name = request
        .environment
        .unwrap_or_else(|| state.root.catalog().name.clone());
    let created = match request.parts {
        Some(parts) => match parts_from_list(parts) {
            Ok(parts) => state.host.create_seeded_episode(&name, parts).await,
            Err(detail) => return reply::coded(&CodedError::invalid_params(detail)),
        },
        None => state.host.create_episode(&name).await.map_err(Into::into),
    };
    match created {
        Ok(episode) => {
            if let Some(lifetime) = lifetime {
                episode.expire_after(lifetime);
            }
            created_response(&state, &episode)
        }
        Err(SeedError::Create(e)) => create_error(&e),
        Err(SeedError::Data(e)) => seed_error(e),
    }
}

/// `201` with the episode's summary and its `Location`.
fn created_response(state: &AppState, episode: &Episode) -> Response {
    let mut response = reply::json(StatusCode::CREATED, &summary(state, episode));
    if let Ok(location) = HeaderValue::from_str(&episode_url(&state.url_prefix, episode.id())) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// Snapshot `id` restored as a new episode (of environment `name`, when given).
async fn restore(state: &AppState, name: Option<&str>, id: &str) -> Response {
    if let (Some(name), Some(snapshot)) = (name, state.host.snapshot_by_id(id))
        && snapshot.environment != name
    {
        let message = format!("snapshot {id} is of environment {:?}", snapshot.environment);
        return reply::coded(&CodedError::invalid_params(message));
    }
    match state.host.restore(id).await {
        Ok(episode) => created_response(state, &episode),
        Err(e) => snapshot_error(&e),
    }
}

/// The answer to a seed's failed `data/add`.
fn seed_error(e: DataError) -> Response {
    match e {
        DataError::Params(detail) => reply::coded(&CodedError::invalid_params(detail)),
        DataError::Failed(message) => {
            let mut error = CodedError::new("add_failed", message);
            error.status = 422;
            reply::coded(&error)
        }
        DataError::Busy(e) => busy(&e.to_coded()),
    }
}

fn create_error(e: &CreateError) -> Response {
    reply::coded_retry(&e.to_coded())
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
