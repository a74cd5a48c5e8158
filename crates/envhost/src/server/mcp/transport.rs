//! The transport: `POST`, `GET` and `DELETE /mcp` of an episode (protocol.md#sessions), as the
//! reference (mcp 1.30) serves them: stateful sessions (404 for an unknown session id, 400 for a
//! missing one), SSE answers, 202 for notifications, a standalone `GET` stream, `DELETE` to end a
//! session. Requests of one session are served concurrently.
//!
//! The handlers [`post`], [`get`] and [`delete`] serve any [`McpEndpoint`]: an environment's
//! episode ([`routes`]) or a computer.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequest, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::MethodFilter;
use axum::routing::{MethodRouter, on};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};

use super::endpoints::Endpoints;
use super::methods::{self, EpisodeTools, Tools};
use super::sessions::{Session, Sessions};
use super::wire::{self, INTERNAL_ERROR, INVALID_REQUEST, Kind, Message, Refusal, SESSION_HEADER};
use crate::embedding::Episode;
use crate::server::state::{AppState, Current};

/// Something served over MCP: its sessions and its tools.
pub trait McpEndpoint: Send + Sync {
    /// Its sessions, when one was ever opened.
    fn sessions(&self) -> Option<Arc<Sessions>>;
    /// Its sessions, made if need be (to open one).
    fn sessions_or_default(&self) -> Arc<Sessions>;
    /// What answers its requests; `None` when it cannot be listed.
    fn tools(&self) -> Option<Box<dyn Tools + '_>>;
}

/// An environment's episode, with the server's endpoints.
struct EpisodeEndpoint<'a> {
    endpoints: &'a Endpoints,
    episode: &'a Episode,
}

impl<'a> EpisodeEndpoint<'a> {
    fn of(state: &'a AppState, episode: &'a Episode) -> Self {
        Self {
            endpoints: &state.mcp,
            episode,
        }
    }
}

impl McpEndpoint for EpisodeEndpoint<'_> {
    fn sessions(&self) -> Option<Arc<Sessions>> {
        self.endpoints.sessions(self.episode)
    }

    fn sessions_or_default(&self) -> Arc<Sessions> {
        self.endpoints.sessions_or_default(self.episode)
    }

    fn tools(&self) -> Option<Box<dyn Tools + '_>> {
        let listing = self.endpoints.listing(self.episode)?;
        Some(Box::new(EpisodeTools {
            episode: self.episode,
            listing,
        }))
    }
}

/// The routes of an episode's `/mcp`: `POST`, `GET` and `DELETE`; other verbs get 405.
pub fn routes() -> MethodRouter<AppState> {
    on(MethodFilter::POST, episode_post)
        .on(MethodFilter::GET, episode_get)
        .on(MethodFilter::DELETE, episode_delete)
        .fallback(method_not_allowed)
}

async fn episode_post(
    State(state): State<AppState>,
    Current(episode): Current,
    request: Request,
) -> Response {
    post(&EpisodeEndpoint::of(&state, &episode), request).await
}

async fn episode_get(
    State(state): State<AppState>,
    Current(episode): Current,
    headers: HeaderMap,
) -> Response {
    get(&EpisodeEndpoint::of(&state, &episode), &headers)
}

async fn episode_delete(
    State(state): State<AppState>,
    Current(episode): Current,
    headers: HeaderMap,
) -> Response {
    delete(&EpisodeEndpoint::of(&state, &episode), &headers)
}

fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok())
}

/// 404 `Session not found`.
fn not_found() -> Refusal {
    Refusal::new(StatusCode::NOT_FOUND, INVALID_REQUEST, "Session not found")
}

/// 400 `Bad Request: Missing session ID`.
fn missing_session() -> Refusal {
    Refusal::new(
        StatusCode::BAD_REQUEST,
        INVALID_REQUEST,
        "Bad Request: Missing session ID",
    )
}

/// The session a request to `endpoint` names: `Ok(None)` when it names none.
fn named_session(
    endpoint: &dyn McpEndpoint,
    headers: &HeaderMap,
) -> Result<Option<Arc<Session>>, Refusal> {
    match session_id(headers) {
        None => Ok(None),
        Some(id) => endpoint
            .sessions()
            .and_then(|sessions| sessions.get(id))
            .map(Some)
            .ok_or_else(not_found),
    }
}

/// Splits a request into its headers, moved out rather than cloned as axum's `HeaderMap`
/// extractor would, and its body, read under the body limit (413 beyond it).
async fn headers_and_body(request: Request) -> Result<(HeaderMap, Bytes), Response> {
    let (mut parts, body) = request.into_parts();
    let headers = std::mem::take(&mut parts.headers);
    let body = Bytes::from_request(Request::from_parts(parts, body), &())
        .await
        .map_err(IntoResponse::into_response)?;
    Ok((headers, body))
}

/// `POST /mcp` to `endpoint`.
pub async fn post(endpoint: &dyn McpEndpoint, request: Request) -> Response {
    let (headers, body) = match headers_and_body(request).await {
        Ok(split) => split,
        Err(refused) => return refused,
    };
    let named = match named_session(endpoint, &headers) {
        Ok(named) => named,
        Err(refusal) => return refusal.response(None),
    };
    if !wire::is_json(&headers) {
        let mut response = Response::new(Body::from("Invalid Content-Type header"));
        *response.status_mut() = StatusCode::BAD_REQUEST;
        return response;
    }
    let session_of = named.as_ref().map(|s| s.id.as_str());
    if wire::accepts(&headers) != (true, true) {
        return Refusal::new(
            StatusCode::NOT_ACCEPTABLE,
            INVALID_REQUEST,
            "Not Acceptable: Client must accept both application/json and text/event-stream",
        )
        .response(session_of);
    }
    let message = match Message::parse(&body) {
        Ok(message) => message,
        Err(refusal) => return refusal.response(session_of),
    };
    let session = match (named, message.is_initialize()) {
        (Some(session), _) => session,
        (None, true) => match endpoint.sessions_or_default().open() {
            Ok(session) => session,
            Err(e) => {
                tracing::warn!("refusing a new MCP session: {e}");
                let refusal = Refusal::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    INTERNAL_ERROR,
                    e.to_string(),
                );
                return refusal.response(None);
            }
        },
        (None, false) => return missing_session().response(None),
    };
    if !message.is_initialize()
        && let Some(refusal) = wire::unsupported_version(&headers)
    {
        return refusal.response(Some(&session.id));
    }
    match message.kind() {
        Kind::Accepted => wire::empty(StatusCode::ACCEPTED, Some(&session.id)),
        Kind::Request(id, method) => {
            let Some(tools) = endpoint.tools() else {
                let reply = wire::error_json(id, INTERNAL_ERROR, "the environment is not listed");
                return wire::sse(&reply, &session.id);
            };
            let error =
                match methods::handle(&*tools, method, message.params, &headers, &session.id).await
                {
                    Ok(result) => {
                        let write = |body: &mut Vec<u8>| wire::write_result_json(body, id, &result);
                        match wire::sse_with(result.size_hint() + 64, &session.id, write) {
                            Ok(response) => return response,
                            Err(e) => (INTERNAL_ERROR, e.to_string()),
                        }
                    }
                    Err(error) => error,
                };
            wire::sse(&wire::error_json(id, error.0, &error.1), &session.id)
        }
    }
}

/// `GET /mcp` of `endpoint`: the standalone stream, open until the session ends or the client
/// goes away; envhost never sends on it (it makes no server-to-client requests).
pub fn get(endpoint: &dyn McpEndpoint, headers: &HeaderMap) -> Response {
    if !wire::accepts(headers).1 {
        return Refusal::new(
            StatusCode::NOT_ACCEPTABLE,
            INVALID_REQUEST,
            "Not Acceptable: Client must accept text/event-stream",
        )
        .response(None);
    }
    let session = match named_session(endpoint, headers) {
        Ok(Some(session)) => session,
        Ok(None) => return missing_session().response(None),
        Err(refusal) => return refusal.response(None),
    };
    if let Some(refusal) = wire::unsupported_version(headers) {
        return refusal.response(Some(&session.id));
    }
    if !session.open_stream() {
        return Refusal::new(
            StatusCode::CONFLICT,
            INVALID_REQUEST,
            "Conflict: Only one SSE stream is allowed per session",
        )
        .response(Some(&session.id));
    }
    let id = session.id.clone();
    let guard = StreamGuard(session);
    let stream = futures::stream::once(async move {
        guard.0.ended().await;
        drop(guard);
        Ok::<Bytes, std::convert::Infallible>(Bytes::new())
    });
    wire::event_stream(Body::from_stream(stream), &id)
}

/// Releases a session's standalone stream when its body is dropped.
struct StreamGuard(Arc<Session>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.close_stream();
    }
}

/// `DELETE /mcp` of `endpoint`: ends the session named.
pub fn delete(endpoint: &dyn McpEndpoint, headers: &HeaderMap) -> Response {
    let Some(id) = session_id(headers) else {
        return missing_session().response(None);
    };
    let sessions = endpoint.sessions();
    if sessions.is_some_and(|sessions| sessions.end(id)) {
        wire::empty(StatusCode::OK, None)
    } else {
        not_found().response(None)
    }
}

/// 405 with `Allow: GET, POST, DELETE`.
pub async fn method_not_allowed() -> Response {
    let mut response = Refusal::new(
        StatusCode::METHOD_NOT_ALLOWED,
        INVALID_REQUEST,
        "Method Not Allowed",
    )
    .response(None);
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    response
}
