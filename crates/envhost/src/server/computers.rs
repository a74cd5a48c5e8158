//! Many computers of one driver over HTTP (computer.md#episodes): the root computer served at
//! `/`, and episodes beside it, each a computer of its own (its driver instance, frames, queue,
//! MCP sessions and tool access) with every route of a computer under `/episodes/{id}/`.
//!
//! - `POST /episodes` (body empty or `{}`) → `201 {"id", "driver", "url", "agent_url",
//!   "mcp_url", "root": false}`: a fresh computer.
//! - `POST /fork`, `POST /episodes/{id}/fork` → `201 {…, "forked_from"}`: a computer in the
//!   state of the root or of that episode.
//! - `GET /episodes` → `{"episodes": [...]}`, the root computer first (`"root": true`, its
//!   `url` `/`); `GET /episodes/{id}`; `DELETE /episodes/{id}` → `{"id", "deleted": true}` (409
//!   `root_episode` for the root).
//! - `/agent/{id}/{secret}/.well-known/agent-env.json` and `/agent/{id}/{secret}/mcp`: a
//!   computer's card and MCP at its agent URL (serve.md#access).
//! - `POST /snapshot`, `POST /episodes/{id}/snapshot` → `201 {"snapshot", "url", "inputs"}`: the
//!   state kept in memory; `GET /snapshots`; `DELETE /snapshots/{id}`; `POST
//!   /snapshots/{id}/episodes` or `POST /episodes {"snapshot": id}` → `201 {…, "snapshot"}`: a
//!   computer restored from it.
//!
//! Errors: 400 `invalid_params` (a body other than `{}` or `{"snapshot": id}`), 404
//! `episode_not_found` / `snapshot_not_found`, 409 `fork_unsupported` (a driver granted a
//! display: its state is the X server's), 500 `fork_failed` (the replay faulted or no instance
//! could be made), 503 `too_many_episodes` at the cap, which counts the root, and
//! `too_many_snapshots` past [`MAX_SNAPSHOTS`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::middleware;
use axum::response::Response;
use axum::routing::{MethodRouter, any, get, post};
use bytes::Bytes;
use http::{Method, StatusCode, Uri, header};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use envhost_protocol::computer::card::Shape;
use envhost_protocol::error::{CodedError, INVALID_PARAMS};
use envhost_runtime::driver::ForkError;

use super::access::{self, AGENT_PREFIX, Access, agent_mcp_url, agent_url};
use super::computer::{Served, route_table as computer_route_table, router as computer_router};
use super::prefix::UrlPrefix;
use super::reply;
use crate::MAX_SNAPSHOTS;
use crate::computer::exec::Exec;
use crate::computer::{Computer, ComputerSnapshot};
use crate::ids::{self, Secret};
use envhost_protocol::card::{MCP_PATH, WELL_KNOWN_PATH};

/// Makes the commands capability of a new computer (each computer keeps its own `request_id`s).
pub type MakeExec = Arc<dyn Fn() -> Exec + Send + Sync>;

/// What every computer of the server is served with.
pub struct Template {
    /// The card's shape.
    pub shape: Shape,
    /// Commands, when granted.
    pub exec: Option<MakeExec>,
    /// The home files go under, when granted (shared by every computer: it is the host's).
    pub home: Option<PathBuf>,
}

impl Template {
    fn serve(&self, computer: Arc<Computer>) -> Router {
        computer_router(Served::new(
            computer,
            self.shape.clone(),
            self.exec.as_ref().map(|make| make()),
            self.home.clone(),
        ))
    }
}

/// One computer, its routes and the secret of its agent URL.
#[derive(Clone)]
struct Entry {
    computer: Arc<Computer>,
    routes: Router,
    secret: Secret,
}

/// The root computer and the episodes beside it.
pub struct Computers {
    template: Template,
    root_id: String,
    root: Entry,
    episodes: RwLock<HashMap<String, Entry>>,
    snapshots: RwLock<HashMap<String, Arc<ComputerSnapshot>>>,
    max: usize,
    url_prefix: UrlPrefix,
}

type Shared = Arc<Computers>;

impl Computers {
    /// `root` served at `/` with `template`; at most `max` computers, the root counted.
    pub fn new(root: Arc<Computer>, template: Template, max: usize) -> Self {
        let routes = template.serve(root.clone());
        Self {
            template,
            root_id: ids::fresh().1,
            root: Entry {
                computer: root,
                routes,
                secret: Secret::fresh(),
            },
            episodes: RwLock::default(),
            snapshots: RwLock::default(),
            max: max.max(1),
            url_prefix: UrlPrefix::default(),
        }
    }

    /// The same computers also served under `prefix`, which the URLs the server hands out
    /// carry (serve.md#behind-a-proxy).
    #[must_use]
    pub fn with_url_prefix(mut self, prefix: UrlPrefix) -> Self {
        self.url_prefix = prefix;
        self
    }

    fn get(&self, id: &str) -> Option<Entry> {
        read(&self.episodes).get(id).cloned()
    }

    /// Computer `id`, the root included.
    fn get_any(&self, id: &str) -> Option<Entry> {
        if id == self.root_id {
            return Some(self.root.clone());
        }
        self.get(id)
    }

    /// Adds `computer` as an episode, unless the cap is reached.
    fn add(&self, computer: Arc<Computer>) -> Result<String, CodedError> {
        let mut episodes = write(&self.episodes);
        if episodes.len() + 1 >= self.max {
            return Err(too_many(self.max));
        }
        let (_, id) = ids::fresh();
        let routes = self.template.serve(computer.clone());
        let secret = Secret::fresh();
        episodes.insert(
            id.clone(),
            Entry {
                computer,
                routes,
                secret,
            },
        );
        Ok(id)
    }

    fn full(&self) -> bool {
        read(&self.episodes).len() + 1 >= self.max
    }
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

fn too_many(max: usize) -> CodedError {
    let mut error = CodedError::new(
        "too_many_episodes",
        format!("the server holds as many computers as it may: {max}, the root counted"),
    );
    error.status = 503;
    error.retryable = true;
    error
}

/// A coded error's answer, with `Retry-After: 1` when it is retryable.
fn refused(error: &CodedError) -> Response {
    let mut response = reply::coded(error);
    if error.retryable {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, http::HeaderValue::from_static("1"));
    }
    response
}

/// Refuses a body other than an empty one or `{}` (a fork or a snapshot takes no arguments).
fn no_arguments(body: &[u8]) -> Result<(), CodedError> {
    let empty = body.iter().all(u8::is_ascii_whitespace)
        || serde_json::from_slice::<Value>(body)
            .ok()
            .is_some_and(|v| v.as_object().is_some_and(serde_json::Map::is_empty));
    if empty {
        return Ok(());
    }
    let mut error = CodedError::new(INVALID_PARAMS, "this route takes an empty body or {}");
    error.status = 400;
    Err(error)
}

fn not_found(id: &str) -> Response {
    let mut error = CodedError::new("episode_not_found", format!("no episode {id:?}"));
    error.status = 404;
    reply::coded(&error)
}

/// `{"id", "driver", "url", "agent_url", "mcp_url", "root"}`, the URLs after the prefix.
fn summary(computers: &Computers, id: &str, entry: &Entry, root: bool) -> Value {
    let prefix = &computers.url_prefix;
    let url = if root {
        "/".to_owned()
    } else {
        format!("/episodes/{id}/")
    };
    json!({
        "id": id,
        "driver": entry.computer.driver().name(),
        "url": prefix.url(&url),
        "agent_url": prefix.url(&agent_url(id, &entry.secret)),
        "mcp_url": prefix.url(&agent_mcp_url(id, &entry.secret)),
        "root": root,
    })
}

/// `201` with the episode's summary and `extra` (`forked_from` or `snapshot`, and its value).
fn created(computers: &Computers, id: &str, extra: Option<(&str, &str)>) -> Response {
    let Some(entry) = computers.get_any(id) else {
        return not_found(id);
    };
    let mut body = summary(computers, id, &entry, false);
    if let Some((key, value)) = extra {
        body[key] = json!(value);
    }
    let mut response = reply::json(StatusCode::CREATED, &body);
    if let Ok(location) = computers
        .url_prefix
        .url(&format!("/episodes/{id}/"))
        .parse()
    {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// The server's own routes: the episodes API, forks, snapshots, and each computer's card and
/// MCP at its agent URL: path, verbs, handlers.
fn mounts() -> Vec<(String, &'static [Method], MethodRouter<Shared>)> {
    let (get_only, post_only): (&[Method], &[Method]) = (&[Method::GET], &[Method::POST]);
    let mut mounts: Vec<(String, &'static [Method], MethodRouter<Shared>)> = vec![
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
            axum::routing::delete(delete_snapshot),
        ),
        (
            "/snapshots/{id}/episodes".into(),
            post_only,
            post(restore_route),
        ),
    ];
    let agent_base = format!("{AGENT_PREFIX}/{{id}}/{{secret}}");
    mounts.push((
        format!("{agent_base}{WELL_KNOWN_PATH}"),
        get_only,
        any(dispatch_agent),
    ));
    let mcp: &[Method] = &[Method::POST, Method::GET, Method::DELETE];
    mounts.push((format!("{agent_base}{MCP_PATH}"), mcp, any(dispatch_agent)));
    mounts
}

/// Every route of a computers' server, as its path pattern and the verbs it answers: its own,
/// and every route of a computer ([`super::computer::route_table`], the optional ones
/// included) at the root and under `/episodes/{id}`. What the access tests walk.
pub fn route_table() -> Vec<(String, &'static [Method])> {
    let mut table: Vec<(String, &'static [Method])> = mounts()
        .into_iter()
        .map(|(path, methods, _)| (path, methods))
        .collect();
    for (path, methods) in computer_route_table() {
        table.push((path.to_owned(), methods));
        table.push((format!("/episodes/{{id}}{path}"), methods));
    }
    table
}

/// The routes: the server's own ([`route_table`]), and each computer's under `/episodes/{id}/`
/// or, for the root computer, at every other path (docs/computer.md#episodes); every request
/// first past [`access::guard`] with `access`, at the root and under the URL prefix
/// ([`Computers::with_url_prefix`]).
pub fn router(computers: Computers, access: Access) -> Router {
    let prefix = computers.url_prefix.clone();
    let shared: Shared = Arc::new(computers);
    let router = mounts()
        .into_iter()
        .fold(Router::new(), |router, (path, _, handlers)| {
            router.route(&path, handlers)
        })
        .route("/episodes/{id}/{*rest}", any(dispatch))
        .fallback(root)
        .with_state(shared)
        .layer(middleware::from_fn_with_state(access, access::guard));
    prefix.serve(router)
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
    if computers.full() {
        return refused(&too_many(computers.max));
    }
    let computer = match computers
        .root
        .computer
        .driver()
        .instantiate("episode")
        .await
    {
        Ok(instance) => Computer::new(
            computers.root.computer.driver().clone(),
            instance,
            computers.root.computer.settings(),
        ),
        Err(e) => return reply::coded(&fork_failed(format!("starting the driver: {e:#}"))),
    };
    match computers.add(computer) {
        Ok(id) => created(&computers, &id, None),
        Err(e) => refused(&e),
    }
}

fn fork_refused(e: &ForkError) -> Response {
    match e {
        ForkError::Display(_) => {
            let mut error = CodedError::new("fork_unsupported", e.to_string());
            error.status = 409;
            reply::coded(&error)
        }
        _ => reply::coded(&fork_failed(e.to_string())),
    }
}

async fn snapshot(computers: &Computers, computer: &Computer) -> Response {
    if let Some(display) = computer.driver().display() {
        return fork_refused(&ForkError::Display(display.to_owned()));
    }
    let kept = Arc::new(computer.snapshot().await);
    let mut snapshots = write(&computers.snapshots);
    if snapshots.len() >= MAX_SNAPSHOTS {
        let mut error = CodedError::new(
            "too_many_snapshots",
            format!("the server keeps its maximum of {MAX_SNAPSHOTS} snapshots; delete one first"),
        );
        error.status = 503;
        return reply::coded(&error);
    }
    let (_, id) = ids::fresh();
    let answer = snapshot_summary(computers, &id, &kept);
    snapshots.insert(id, kept);
    reply::json(StatusCode::CREATED, &answer)
}

async fn snapshot_root(State(computers): State<Shared>, body: Bytes) -> Response {
    if let Err(e) = no_arguments(&body) {
        return reply::coded(&e);
    }
    let root = computers.root.computer.clone();
    snapshot(&computers, &root).await
}

async fn snapshot_episode(
    State(computers): State<Shared>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Err(e) = no_arguments(&body) {
        return reply::coded(&e);
    }
    match computers.get_any(&id) {
        Some(entry) => snapshot(&computers, &entry.computer).await,
        None => not_found(&id),
    }
}

async fn list_snapshots(State(computers): State<Shared>) -> Response {
    let snapshots: Vec<Value> = read(&computers.snapshots)
        .iter()
        .map(|(id, kept)| snapshot_summary(&computers, id, kept))
        .collect();
    reply::json(StatusCode::OK, &json!({ "snapshots": snapshots }))
}

/// `{"snapshot", "url", "inputs"}`, the URL after the prefix.
fn snapshot_summary(computers: &Computers, id: &str, kept: &ComputerSnapshot) -> Value {
    let url = computers.url_prefix.url(&format!("/snapshots/{id}"));
    json!({"snapshot": id, "url": url, "inputs": kept.inputs()})
}

fn snapshot_not_found(id: &str) -> Response {
    let mut error = CodedError::new("snapshot_not_found", format!("no snapshot {id:?}"));
    error.status = 404;
    reply::coded(&error)
}

async fn delete_snapshot(State(computers): State<Shared>, Path(id): Path<String>) -> Response {
    let removed = write(&computers.snapshots).remove(&id);
    match removed {
        Some(_) => reply::json(StatusCode::OK, &json!({"snapshot": id, "deleted": true})),
        None => snapshot_not_found(&id),
    }
}

async fn restore_route(
    State(computers): State<Shared>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    match no_arguments(&body) {
        Ok(()) => restore(&computers, &id).await,
        Err(e) => reply::coded(&e),
    }
}

/// A computer restored from snapshot `id`.
async fn restore(computers: &Computers, id: &str) -> Response {
    let kept = read(&computers.snapshots).get(id).cloned();
    let Some(kept) = kept else {
        return snapshot_not_found(id);
    };
    if computers.full() {
        return refused(&too_many(computers.max));
    }
    let driver = computers.root.computer.driver().clone();
    let computer = match Computer::restore(driver, &kept, "restore").await {
        Ok(computer) => computer,
        Err(e) => return fork_refused(&e),
    };
    match computers.add(computer) {
        Ok(episode) => created(computers, &episode, Some(("snapshot", id))),
        Err(e) => refused(&e),
    }
}

fn fork_failed(message: String) -> CodedError {
    let mut error = CodedError::new("fork_failed", message);
    error.status = 500;
    error
}

async fn fork(computers: &Computers, from: &Computer, from_id: &str) -> Response {
    if computers.full() {
        return refused(&too_many(computers.max));
    }
    let fork = match from.fork("fork").await {
        Ok(fork) => fork,
        Err(e) => return fork_refused(&e),
    };
    match computers.add(fork) {
        Ok(id) => created(computers, &id, Some(("forked_from", from_id))),
        Err(e) => refused(&e),
    }
}

async fn fork_root(State(computers): State<Shared>, body: Bytes) -> Response {
    if let Err(e) = no_arguments(&body) {
        return reply::coded(&e);
    }
    let root = computers.root.computer.clone();
    fork(&computers, &root, "root").await
}

async fn fork_episode(
    State(computers): State<Shared>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Err(e) = no_arguments(&body) {
        return reply::coded(&e);
    }
    match computers.get_any(&id) {
        Some(entry) => fork(&computers, &entry.computer, &id).await,
        None => not_found(&id),
    }
}

async fn list(State(computers): State<Shared>) -> Response {
    let mut episodes = vec![summary(
        &computers,
        &computers.root_id,
        &computers.root,
        true,
    )];
    episodes.extend(
        read(&computers.episodes)
            .iter()
            .map(|(id, entry)| summary(&computers, id, entry, false)),
    );
    reply::json(StatusCode::OK, &json!({ "episodes": episodes }))
}

async fn show(State(computers): State<Shared>, Path(id): Path<String>) -> Response {
    match computers.get_any(&id) {
        Some(entry) => reply::json(
            StatusCode::OK,
            &summary(&computers, &id, &entry, id == computers.root_id),
        ),
        None => not_found(&id),
    }
}

async fn delete(State(computers): State<Shared>, Path(id): Path<String>) -> Response {
    if id == computers.root_id {
        let mut error = CodedError::new("root_episode", "the root computer cannot be deleted");
        error.status = 409;
        return reply::coded(&error);
    }
    let removed = write(&computers.episodes).remove(&id);
    match removed {
        Some(_) => reply::json(StatusCode::OK, &json!({"id": id, "deleted": true})),
        None => not_found(&id),
    }
}

/// A request under `/episodes/{id}/`, served by that computer's routes at the path after it.
async fn dispatch(
    State(computers): State<Shared>,
    Path((id, rest)): Path<(String, String)>,
    mut request: Request,
) -> Response {
    let Some(entry) = computers.get_any(&id) else {
        return not_found(&id);
    };
    let path = match request.uri().query() {
        Some(query) => format!("/{rest}?{query}"),
        None => format!("/{rest}"),
    };
    match path.parse::<Uri>() {
        Ok(uri) => *request.uri_mut() = uri,
        Err(_) => return not_found(&id),
    }
    match entry.routes.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// A request to an agent URL, `/agent/{id}/{secret}/` and the card's or MCP's path: served by
/// computer `id`'s routes at that path when `secret` is its secret (compared in constant time),
/// else 403 `agent_url_refused`, the same whichever was wrong.
async fn dispatch_agent(
    State(computers): State<Shared>,
    Path((id, secret)): Path<(String, String)>,
    mut request: Request,
) -> Response {
    let entry = computers.get_any(&id);
    let held = entry.as_ref().map_or(&*NO_SECRET, |e| &e.secret);
    let matches = held.matches(&secret);
    let (Some(entry), true) = (entry, matches) else {
        return access::agent_url_refused();
    };
    let Some((_, _, path)) = access::agent_route(request.uri().path()) else {
        return access::agent_url_refused();
    };
    let path = match request.uri().query() {
        Some(query) => format!("{path}?{query}"),
        None => path.to_owned(),
    };
    match path.parse::<Uri>() {
        Ok(uri) => *request.uri_mut() = uri,
        Err(_) => return access::agent_url_refused(),
    }
    match entry.routes.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// What a secret is compared with when the id names no computer, so that the refusal takes the
/// time a wrong secret's does.
static NO_SECRET: std::sync::LazyLock<Secret> = std::sync::LazyLock::new(Secret::fresh);

/// Any other request: the root computer's.
async fn root(State(computers): State<Shared>, request: Request) -> Response {
    match computers.root.routes.clone().oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}
