//! Agents over HTTP (docs/agents.md#serving): `POST /agents/{name}/invoke` as fastagent's
//! reference handler serves it. POST only (405, `Allow: POST`); a body of at most 1 MiB (413);
//! `content-type: application/json` (415); a JSON object `{session, text, images?, episode?,
//! parentSession?, branchHints?}` (400 `invalid_params` otherwise; 404 `agent_not_found`,
//! `episode_not_found`). The answer is 200 `text/event-stream`, one `data: <event JSON>\n\n`
//! frame per event and `: ping\n\n` every heartbeat; the client going away cancels the turn.
//! With `Accept: application/json` it is the buffered `collect`: `{"text", "data"}`, or
//! `{"failed": {"details", "retryable", "code"}}`.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};

use envhost_protocol::error::CodedError;

use super::reply;
use super::state::AppState;
use crate::agent::sessions::MAX_SESSION_BYTES;
use crate::agent::{AgentEvents, Image, Prompt, Scope};
use crate::embedding::InvokeError;

/// The largest invoke body, in bytes.
pub const MAX_INVOKE_BYTES: usize = 1 << 20;

fn refused(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let mut error = CodedError::new(code, message);
    error.status = status.as_u16();
    reply::coded(&error)
}

/// The request's fields, checked.
struct Invoke {
    scope: Scope,
    prompt: Prompt,
}

fn parse(body: &[u8]) -> Result<Invoke, String> {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(body) else {
        return Err("the body must be a JSON object".into());
    };
    let text_field = |key: &str| -> Result<Option<String>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("{key} must be a string, got {other}")),
        }
    };
    let session = text_field("session")?
        .filter(|s| !s.is_empty())
        .ok_or("session is a required non-empty string")?;
    if session.len() > MAX_SESSION_BYTES {
        return Err(format!(
            "session is at most {MAX_SESSION_BYTES} bytes, got {}",
            session.len()
        ));
    }
    let list = |key: &str| -> Result<&[Value], String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(format!("{key} must be a list, got {other}")),
        }
    };
    let text = text_field("text")?.ok_or("text is a required string")?;
    let mut images = Vec::new();
    for image in list("images")? {
        let (Some(mime_type), Some(data)) = (
            image.get("mimeType").and_then(Value::as_str),
            image.get("data").and_then(Value::as_str),
        ) else {
            return Err("each image is {\"mimeType\", \"data\"} (base64)".into());
        };
        images.push(Image {
            mime_type: mime_type.into(),
            data: data.into(),
        });
    }
    let branch_hints = list("branchHints")?
        .iter()
        .map(|hint| {
            hint.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("branchHints must be strings, got {hint}"))
        })
        .collect::<Result<_, _>>()?;
    Ok(Invoke {
        scope: Scope {
            session,
            parent_session: text_field("parentSession")?,
            branch_hints,
            episode: text_field("episode")?,
        },
        prompt: Prompt { text, images },
    })
}

/// `POST /agents/{name}/invoke`: a turn of agent `name` of `state`'s host, on the episode the
/// body names, else the root episode when the agent is bound to its environment.
pub async fn invoke(
    State(state): State<AppState>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    if request.method() != Method::POST {
        let mut response = refused(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "invoke takes POST",
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let Some(environment) = state.host.agent_environment(&name) else {
        return refused(
            StatusCode::NOT_FOUND,
            "agent_not_found",
            format!("no agent {name:?}"),
        );
    };
    let root = (state.root.catalog().name == environment).then(|| state.root.id().to_owned());
    let headers = request.headers().clone();
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the body must be application/json",
        );
    }
    let body = match axum::body::to_bytes(request.into_body(), MAX_INVOKE_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            return refused(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!("the body is over {MAX_INVOKE_BYTES} bytes"),
            );
        }
    };
    let mut request = match parse(&body) {
        Ok(request) => request,
        Err(message) => return refused(StatusCode::BAD_REQUEST, "invalid_params", message),
    };
    if request.scope.episode.is_none() {
        request.scope.episode = root;
    }
    let events = match state.host.invoke(&name, request.scope, request.prompt) {
        Ok(events) => events,
        Err(e) => {
            let status = match e {
                InvokeError::NoEpisode(_) => StatusCode::BAD_REQUEST,
                _ => StatusCode::NOT_FOUND,
            };
            return refused(status, e.code(), e.to_string());
        }
    };
    let buffered = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json") && !v.contains("text/event-stream"));
    if buffered {
        return collected(events).await;
    }
    stream(events, state.agent_heartbeat)
}

async fn collected(events: AgentEvents) -> Response {
    let answer = match events.collect().await {
        Ok(c) => json!({"text": c.text, "data": c.data}),
        Err(f) => {
            json!({"failed": {"details": f.details, "retryable": f.retryable, "code": f.code}})
        }
    };
    reply::json(StatusCode::OK, &answer)
}

fn stream(events: AgentEvents, heartbeat: Duration) -> Response {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + heartbeat, heartbeat);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let frames = futures::stream::unfold((events, ticks), |(mut events, mut ticks)| async move {
        let frame = tokio::select! {
            event = events.recv() => match event {
                Some(event) => format!("data: {}\n\n", event.to_json()),
                None => return None,
            },
            _ = ticks.tick() => ": ping\n\n".to_owned(),
        };
        Some((
            Ok::<_, std::convert::Infallible>(Bytes::from(frame)),
            (events, ticks),
        ))
    });
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(frames),
    )
        .into_response()
}
