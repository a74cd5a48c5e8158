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
use super::notify::{self, Event, StreamPeer};
use super::sessions::{Running, Session, Sessions};
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

    /// A copy that owns what it serves, for a request whose answer streams notifications
    /// while a tool runs; `None` when its answers never stream.
    fn owned(&self) -> Option<Arc<dyn McpEndpoint>> {
        None
    }
}

/// An environment's episode, with the server's endpoints.
#[derive(Clone)]
struct EpisodeEndpoint {
    endpoints: Arc<Endpoints>,
    episode: Arc<Episode>,
}

impl EpisodeEndpoint {
    fn of(state: &AppState, episode: Arc<Episode>) -> Self {
        Self {
            endpoints: state.mcp.clone(),
            episode,
        }
    }
}

impl McpEndpoint for EpisodeEndpoint {
    fn sessions(&self) -> Option<Arc<Sessions>> {
        self.endpoints.sessions(&self.episode)
    }

    fn sessions_or_default(&self) -> Arc<Sessions> {
        self.endpoints.sessions_or_default(&self.episode)
    }

    fn tools(&self) -> Option<Box<dyn Tools + '_>> {
        let listing = self.endpoints.listing(&self.episode)?;
        Some(Box::new(EpisodeTools {
            episode: &self.episode,
            listing,
        }))
    }

    fn owned(&self) -> Option<Arc<dyn McpEndpoint>> {
        Some(Arc::new(self.clone()))
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
    post(&EpisodeEndpoint::of(&state, episode), request).await
}

async fn episode_get(
    State(state): State<AppState>,
    Current(episode): Current,
    headers: HeaderMap,
) -> Response {
    get(&EpisodeEndpoint::of(&state, episode), &headers)
}

async fn episode_delete(
    State(state): State<AppState>,
    Current(episode): Current,
    headers: HeaderMap,
) -> Response {
    delete(&EpisodeEndpoint::of(&state, episode), &headers)
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
    if let Some((id, reply)) = message.reply() {
        session.reply(id, reply);
        return wire::empty(StatusCode::ACCEPTED, Some(&session.id));
    }
    match message.kind() {
        Kind::Accepted => {
            if message.method.as_deref() == Some("notifications/cancelled") {
                cancel(&session, message.params);
            }
            wire::empty(StatusCode::ACCEPTED, Some(&session.id))
        }
        Kind::Request(id, method) => {
            let running = (method == "tools/call").then(|| session.run_call(id.get()));
            if let Some(streamed) = streaming(endpoint, &session, method, message.params) {
                let request = Streamed {
                    id: id.to_owned(),
                    method: method.to_owned(),
                    params: message.params.map(ToOwned::to_owned),
                    headers,
                    session,
                    running,
                };
                return stream_answer(streamed, request);
            }
            let Some(tools) = endpoint.tools() else {
                let reply = wire::error_json(id, INTERNAL_ERROR, "the environment is not listed");
                return wire::sse(&reply, &session.id);
            };
            let peer = running.as_ref().map(|running| {
                Arc::new(notify::Unaskable(running.cancel.clone()))
                    as Arc<dyn envhost_runtime::Peer>
            });
            let params = message.params;
            let answer = methods::handle(&*tools, method, params, &headers, &session, peer).await;
            drop(running);
            wire::sse_answer(id, answer, &session.id)
        }
    }
}

/// `notifications/cancelled`: cancels the running tool call its `requestId` names, if any
/// (protocol.md#cancellation).
fn cancel(session: &Session, params: Option<&serde_json::value::RawValue>) {
    #[derive(serde::Deserialize)]
    struct Cancelled<'a> {
        #[serde(rename = "requestId", borrow)]
        request_id: &'a serde_json::value::RawValue,
    }
    if let Some(cancelled) = params.and_then(|p| serde_json::from_str::<Cancelled>(p.get()).ok()) {
        session.cancel(cancelled.request_id.get());
    }
}

/// What a request's answer streams through: the endpoint's owned copy and the call's progress
/// token, when `method` is `tools/call` and the client asked for progress (a `progressToken`)
/// or log records (`logging/setLevel`), or may be asked something (it declared sampling,
/// elicitation or roots); `None` for an answer that is one event.
fn streaming(
    endpoint: &dyn McpEndpoint,
    session: &Session,
    method: &str,
    params: Option<&serde_json::value::RawValue>,
) -> Option<(Arc<dyn McpEndpoint>, Option<rmcp::model::ProgressToken>)> {
    if method != "tools/call" {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(rename = "_meta", default)]
        meta: Option<serde_json::Map<String, serde_json::Value>>,
    }
    // The params are read for a token only when they can hold one: a plain call's are read
    // once, by the method itself.
    let token = params
        .filter(|p| p.get().contains("progressToken"))
        .and_then(|p| serde_json::from_str::<Meta>(p.get()).ok())
        .and_then(|p| notify::progress_token(p.meta.as_ref()));
    let askable = notify::CLIENT_CAPABILITIES
        .into_iter()
        .any(|capability| session.client_can(capability));
    if token.is_none() && session.log_level().is_none() && !askable {
        return None;
    }
    Some((endpoint.owned()?, token))
}

/// A request whose answer streams, owned by the task that answers it.
struct Streamed {
    id: Box<serde_json::value::RawValue>,
    method: String,
    params: Option<Box<serde_json::value::RawValue>>,
    headers: HeaderMap,
    session: Arc<Session>,
    /// The tool call, running until the answer is sent.
    running: Option<Running>,
}

/// The answer to `request` as an SSE stream: the call's notifications as they come, then its
/// answer, after which the stream ends. The call runs on a task of its own, which finishes
/// even if the client goes away.
fn stream_answer(
    (endpoint, token): (Arc<dyn McpEndpoint>, Option<rmcp::model::ProgressToken>),
    request: Streamed,
) -> Response {
    let (events, received) = tokio::sync::mpsc::channel(notify::BUFFERED);
    let session_id = request.session.id.clone();
    tokio::spawn(async move {
        let Streamed {
            id,
            method,
            params,
            headers,
            session,
            running,
        } = request;
        let answer = match endpoint.tools() {
            None => Err((INTERNAL_ERROR, "the environment is not listed".to_owned())),
            Some(tools) => {
                let cancel = running
                    .as_ref()
                    .map(|r| r.cancel.clone())
                    .unwrap_or_default();
                let peer = StreamPeer::new(
                    events.clone(),
                    token,
                    session.log_level(),
                    tools.name().to_owned(),
                    Some(session.clone()),
                    cancel,
                );
                let params = params.as_deref();
                methods::handle(&*tools, &method, params, &headers, &session, Some(peer)).await
            }
        };
        drop(running);
        let event = wire::sse_event(&wire::answer_json(&id, answer));
        let _ = events.send(Event::Answer(event)).await;
    });
    let stream = futures::stream::unfold(Some(received), |received| async move {
        let mut received = received?;
        match received.recv().await? {
            Event::Message(bytes) => {
                Some((Ok::<_, std::convert::Infallible>(bytes), Some(received)))
            }
            Event::Answer(bytes) => Some((Ok(bytes), None)),
        }
    });
    wire::event_stream(Body::from_stream(stream), &session_id)
}

/// How often an open standalone stream gets a ping comment, as the reference's
/// (sse-starlette's default).
pub const STREAM_PING: std::time::Duration = std::time::Duration::from_secs(15);

/// `GET /mcp` of `endpoint`: the standalone stream, open until the session ends or the client
/// goes away, carrying a `: ping - <UTC time>` comment every [`STREAM_PING`] as the reference's
/// does (protocol.md#sessions).
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
    let ticks = tokio::time::interval_at(tokio::time::Instant::now() + STREAM_PING, STREAM_PING);
    let stream = futures::stream::unfold(Some((guard, ticks)), |state| async move {
        let (guard, mut ticks) = state?;
        tokio::select! {
            () = guard.0.ended() => None,
            _ = ticks.tick() => {
                Some((Ok::<Bytes, std::convert::Infallible>(wire::ping()), Some((guard, ticks))))
            }
        }
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
