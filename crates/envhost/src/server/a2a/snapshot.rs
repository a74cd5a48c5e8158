//! snapshot/v1 (docs/agent-env.md#snapshots): a context saved whole through a grant and loaded
//! back, on this deployment or another of the same agent. What is saved is the context's session
//! history, its trajectory, and a snapshot of every episode of this host bound as one of the
//! deployment's MCP servers, so a loaded context continues with its environments exactly as
//! they were: the one thing an agent in a container cannot offer cheaply.
//!
//! - `POST /ext/snapshot {"context_id", "objects": {"trajectory": WriteObject}}` →
//!   `{"context_id", "objects": {"trajectory": {"size_bytes", "sha256"}}}`; the object
//!   (`application/octet-stream`) is the JSON [`Saved`].
//! - `PUT /ext/snapshot {"objects": {"trajectory": ReadObject}, "target_context_id"?}` →
//!   `{"context_id"}`: each saved episode restored as a new episode and bound under its server's
//!   name (replacing a server of that name), the history put in the new context.

use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::config::object_body;
use super::deployment::{Deployment, lock};
use super::tools::McpServer;
use super::trajectory::{context_entries, transfer_failed};
use super::wire::{self, field_error};
use crate::agent::model::Message;
use crate::server::access::agent_mcp_url;
use crate::server::state::AppState;
use crate::transfers::objects::{self, ReadObject, WriteObject};

/// The format [`Saved`] declares.
pub const FORMAT: &str = "envhost-agent-context/v1";

/// The media type snapshot objects have.
const MEDIA_TYPE: &str = "application/octet-stream";

/// A saved context.
#[derive(Serialize, Deserialize)]
pub struct Saved {
    /// [`FORMAT`].
    format: String,
    /// The agent whose deployment saved it.
    agent: String,
    /// The context saved.
    context_id: String,
    /// Its session history, oldest first.
    history: Vec<Message>,
    /// Its tasks' events.
    trajectory: Vec<Value>,
    /// The episodes of this host bound to the deployment.
    episodes: Vec<SavedEpisode>,
    /// The MCP servers not saved (not episodes of this host): their names.
    not_saved: Vec<String>,
}

/// One episode of a saved context.
#[derive(Serialize, Deserialize)]
struct SavedEpisode {
    /// The MCP server's name.
    server: String,
    /// The role its tools were called as, when it had its own.
    role: Option<String>,
    /// Its environment.
    environment: String,
    /// Its snapshot file (docs/snapshots.md), base64.
    snapshot: String,
}

fn refused(status: StatusCode, message: impl Into<String>) -> Response {
    wire::text(status, message)
}

/// The grant `objects.trajectory` of `body`, of [`MEDIA_TYPE`], and no `workspace`.
fn grant<T: serde::de::DeserializeOwned>(
    body: &serde_json::Map<String, Value>,
    media_type: impl Fn(&T) -> &str,
) -> Result<T, Response> {
    let Some(Value::Object(objects)) = body.get("objects") else {
        return Err(wire::invalid(vec![field_error(
            "missing",
            "objects",
            "Field required",
        )]));
    };
    if objects.contains_key("workspace") {
        return Err(refused(
            StatusCode::BAD_REQUEST,
            "this agent has no workspace: give objects.trajectory only",
        ));
    }
    let grant = objects
        .get("trajectory")
        .cloned()
        .map(serde_json::from_value::<T>)
        .and_then(Result::ok)
        .ok_or_else(|| {
            refused(
                StatusCode::BAD_REQUEST,
                "objects.trajectory is not a transfer grant",
            )
        })?;
    if media_type(&grant) != MEDIA_TYPE {
        return Err(refused(
            StatusCode::BAD_REQUEST,
            "snapshot trajectory media_type must be application/octet-stream",
        ));
    }
    Ok(grant)
}

/// `POST /ext/snapshot`: saves a context.
pub async fn save(state: &AppState, deployment: &Deployment, body: &Bytes) -> Response {
    let body = match object_body(body) {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let Some(context_id) = body
        .get("context_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return wire::invalid(vec![field_error("missing", "context_id", "Field required")]);
    };
    let target: WriteObject = match grant(&body, |g: &WriteObject| &g.media_type) {
        Ok(grant) => grant,
        Err(refused) => return refused,
    };
    let trajectory = {
        let tasks = lock(&deployment.tasks);
        let entries = match context_entries(&tasks, &context_id) {
            Ok(entries) => entries,
            Err(refused) => return refused,
        };
        if entries.iter().any(|e| !e.is_terminal()) {
            return refused(
                StatusCode::CONFLICT,
                format!("context '{context_id}' has a task running"),
            );
        }
        entries
            .iter()
            .flat_map(|e| e.events.iter().cloned())
            .collect()
    };
    let session = format!("{}:{context_id}", deployment.id());
    let history = match state.host.session_history(&session).await {
        Ok(history) => history,
        Err(e) => return refused(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let bound: Vec<(String, Option<String>, Option<String>)> = lock(&deployment.servers)
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.role().map(str::to_owned),
                s.episode_id().map(str::to_owned),
            )
        })
        .collect();
    let mut episodes = Vec::new();
    let mut not_saved = Vec::new();
    for (server, role, id) in bound {
        let Some(episode) = id.and_then(|id| state.host.episode(&id)) else {
            not_saved.push(server);
            continue;
        };
        let file = match state.host.snapshot(&episode).await {
            Ok(id) => {
                let file = state.host.snapshot_by_id(&id).map(|s| s.to_file());
                state.host.delete_snapshot(&id);
                file
            }
            Err(e) => {
                return refused(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("snapshotting the episode of {server}: {e}"),
                );
            }
        };
        let Some(file) = file else {
            not_saved.push(server);
            continue;
        };
        episodes.push(SavedEpisode {
            server,
            role,
            environment: episode.catalog().name.clone(),
            snapshot: BASE64.encode(file),
        });
    }
    let saved = Saved {
        format: FORMAT.into(),
        agent: deployment.agent().to_owned(),
        context_id: context_id.clone(),
        history,
        trajectory,
        episodes,
        not_saved,
    };
    let bytes = serde_json::to_vec(&saved).unwrap_or_default();
    match objects::upload(&state.host.egress_client(), &target, bytes).await {
        Ok(uploaded) => wire::json_as_is(
            StatusCode::OK,
            &json!({"context_id": context_id, "objects": {"trajectory": uploaded}}),
        ),
        Err(e) => transfer_failed(&e),
    }
}

/// `PUT /ext/snapshot`: loads a saved context.
pub async fn load(state: &AppState, deployment: &Deployment, body: &Bytes) -> Response {
    let body = match object_body(body) {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let source: ReadObject = match grant(&body, |g: &ReadObject| &g.media_type) {
        Ok(grant) => grant,
        Err(refused) => return refused,
    };
    let bytes = match objects::download(&state.host.egress_client(), &source).await {
        Ok(bytes) => bytes,
        Err(e) => return transfer_failed(&e),
    };
    let saved = match serde_json::from_slice::<Saved>(&bytes) {
        Ok(saved) if saved.format == FORMAT => saved,
        _ => {
            return refused(
                StatusCode::BAD_REQUEST,
                "the object is not a saved envhost agent context",
            );
        }
    };
    if saved.agent != deployment.agent() {
        return refused(
            StatusCode::BAD_REQUEST,
            format!(
                "the context was saved by agent {:?}, not {:?}",
                saved.agent,
                deployment.agent()
            ),
        );
    }
    let context_id = body
        .get("target_context_id")
        .and_then(Value::as_str)
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    let session = format!("{}:{context_id}", deployment.id());
    let taken = !lock(&deployment.tasks).of_context(&context_id).is_empty()
        || state
            .host
            .session_history(&session)
            .await
            .map_or(true, |h| !h.is_empty());
    if taken {
        return refused(
            StatusCode::CONFLICT,
            format!("context '{context_id}' exists"),
        );
    }
    let mut restored = Vec::new();
    for episode in &saved.episodes {
        let file = match BASE64.decode(&episode.snapshot) {
            Ok(file) => file,
            Err(_) => return refused(StatusCode::BAD_REQUEST, "a saved episode is not base64"),
        };
        let id = match state.host.import_snapshot(&file) {
            Ok(id) => id,
            Err(e) => return refused(StatusCode::BAD_REQUEST, e.to_string()),
        };
        let made = state.host.restore(&id).await;
        state.host.delete_snapshot(&id);
        let new = match made {
            Ok(new) => new,
            Err(e) => return refused(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        };
        let url = state.url_prefix.url(&agent_mcp_url(new.id(), new.secret()));
        restored.push(McpServer::local(
            episode.server.clone(),
            url,
            new.id().to_owned(),
            episode.role.clone(),
        ));
    }
    if let Err(e) = state.host.append_session(&session, &saved.history).await {
        return refused(StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
    }
    let mut servers = lock(&deployment.servers);
    for server in restored {
        servers.retain(|s| s.name != server.name);
        servers.push(server);
    }
    wire::json_as_is(StatusCode::OK, &json!({"context_id": context_id}))
}
