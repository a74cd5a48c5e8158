//! axum: the HTTP surface of a [`Host`] (`docs/http-api.md`). The root serves one default
//! episode exactly as the reference SDK serves its environment (protocol.md#http-surface: card,
//! data plane, MCP, extensions, tool access, readiness); `/episodes` creates, lists and drops
//! episodes, each served the same way under `/episodes/{id}/`; `/snapshots` keeps snapshots;
//! `/metrics` reports. The server glues the host to HTTP and owns no environment logic; MCP has
//! its home in [`mcp`]. A host's computers are served by a router of their own, [`computers`].

pub mod a2a;
pub mod access;
pub mod agents;
pub mod computers;
mod data_plane;
mod episodes;
mod extensions;
pub mod hosts;
mod http_threads;
pub mod mcp;
mod prefix;
mod reply;
mod snapshots;
mod state;
mod tool_access;

pub use http_threads::serve_threads;

use std::sync::Arc;
use std::time::Duration;

use ::http::{HeaderValue, Method, StatusCode, header};
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, any, get, post};
use axum::serve::ListenerExt;
use serde_json::json;
use tower::ServiceExt;

pub use access::Access;
pub use prefix::{InvalidUrlPrefix, UrlPrefix};
pub use state::AppState;

use crate::embedding::{CreateError, Host};
use access::AGENT_PREFIX;
use envhost_protocol::card::{MCP_PATH, RPC_PATH, WELL_KNOWN_PATH};
use mcp::Endpoints;
use state::Current;

/// The default cap on a request body: 64 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 << 20;

/// How often idle episodes are looked for.
const EVICTION_INTERVAL: Duration = Duration::from_secs(1);

async fn card(Current(episode): Current) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        episode.card(),
    )
        .into_response()
}

/// `/mcp/` redirects to `/mcp`, as Starlette does for the reference (relative, so that it holds
/// wherever the episode is mounted), once the episode is found (and an agent URL's secret
/// checked).
async fn mcp_slash(_: Current) -> Response {
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, HeaderValue::from_static("../mcp"))],
    )
        .into_response()
}

/// Gives a 405 the reference's body, `Method Not Allowed` (axum's has none).
async fn method_not_allowed_body(response: Response) -> Response {
    if response.status() != StatusCode::METHOD_NOT_ALLOWED
        || response.headers().contains_key(header::CONTENT_TYPE)
    {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, "Method Not Allowed".into())
}

async fn ready(_: Current) -> Response {
    reply::json(StatusCode::OK, &json!({"status": "ready"}))
}

/// The routes of one episode, wherever it is mounted: `GET /.well-known/agent-env.json`,
/// `POST /agentenv`, `/mcp`, `GET /ready`, `POST /tools/{disable,enable}`,
/// `POST /snapshot`, `POST /fork`; every other path is an extension route.
fn episode_routes() -> [Mount; 9] {
    [
        Mount::new(WELL_KNOWN_PATH, &[Method::GET], get(card)),
        Mount::new(RPC_PATH, &[Method::POST], post(data_plane::rpc)),
        Mount::new("/ready", &[Method::GET], get(ready)),
        Mount::new(MCP_PATH, &MCP_METHODS, mcp::routes()),
        Mount::new("/mcp/", &[Method::POST], any(mcp_slash)),
        Mount::new(
            "/tools/disable",
            &[Method::POST],
            post(tool_access::disable),
        ),
        Mount::new("/tools/enable", &[Method::POST], post(tool_access::enable)),
        Mount::new("/snapshot", &[Method::POST], post(snapshots::take)),
        Mount::new("/fork", &[Method::POST], post(snapshots::fork)),
    ]
}

/// The verbs MCP's streamable HTTP transport answers.
const MCP_METHODS: [Method; 3] = [Method::POST, Method::GET, Method::DELETE];

/// One route the server mounts: its path (axum's pattern), the verbs it answers and its
/// handlers.
struct Mount {
    path: String,
    methods: &'static [Method],
    handlers: MethodRouter<AppState>,
}

impl Mount {
    fn new(path: &str, methods: &'static [Method], handlers: MethodRouter<AppState>) -> Self {
        Self {
            path: path.to_owned(),
            methods,
            handlers,
        }
    }

    /// The same route at `path`.
    fn at(&self, path: String) -> Self {
        Self {
            path,
            methods: self.methods,
            handlers: self.handlers.clone(),
        }
    }
}

/// Every route of the server (docs/http-api.md): the episodes API, the snapshots API,
/// `/metrics`, agents' turns, and every episode's routes at the root, under `/episodes/{id}`
/// and, the card and MCP only, under the agent URL `/agent/{id}/{secret}`.
fn mounts() -> Vec<Mount> {
    let mut mounts = vec![
        Mount::new(
            "/episodes",
            &[Method::POST, Method::GET],
            post(episodes::create).get(episodes::list),
        ),
        Mount::new(
            "/episodes/{id}",
            &[Method::GET, Method::DELETE],
            get(episodes::show).delete(episodes::delete),
        ),
        Mount::new(
            "/episodes/{id}/{*path}",
            &[Method::GET, Method::POST],
            any(extensions::dispatch_episode),
        ),
        Mount::new("/metrics", &[Method::GET], get(episodes::metrics)),
        Mount::new(
            "/snapshots",
            &[Method::GET, Method::POST],
            get(snapshots::list).post(snapshots::upload),
        ),
        Mount::new(
            "/snapshots/{id}",
            &[Method::GET, Method::DELETE],
            get(snapshots::download).delete(snapshots::delete),
        ),
        Mount::new(
            "/snapshots/{id}/episodes",
            &[Method::POST],
            post(snapshots::restore),
        ),
        Mount::new(
            "/agents/{name}/invoke",
            &[Method::POST],
            any(agents::invoke),
        ),
        Mount::new(
            "/agents/{name}/deployments",
            &[Method::POST],
            post(a2a::control::create),
        ),
        Mount::new("/deployments", &[Method::GET], get(a2a::control::list)),
        Mount::new(
            "/deployments/{id}",
            &[Method::GET, Method::DELETE],
            get(a2a::control::show).delete(a2a::control::delete),
        ),
        Mount::new(
            "/deployments/{id}/{secret}/{*rest}",
            &[Method::GET, Method::POST],
            any(a2a::serve),
        ),
    ];
    let agent_base = format!("{AGENT_PREFIX}/{{id}}/{{secret}}");
    for route in episode_routes() {
        mounts.push(route.at(format!("/episodes/{{id}}{}", route.path)));
        if [WELL_KNOWN_PATH, MCP_PATH, "/mcp/"].contains(&route.path.as_str()) {
            mounts.push(route.at(format!("{agent_base}{}", route.path)));
        }
        mounts.push(route);
    }
    mounts
}

/// Every route the server mounts, as axum's path pattern and the verbs it answers; a path no
/// route matches is an extension route of the root episode. What the access tests walk.
pub fn route_table() -> Vec<(String, &'static [Method])> {
    mounts()
        .into_iter()
        .map(|mount| (mount.path, mount.methods))
        .collect()
}

/// The whole surface: [`route_table`]'s routes, the root episode's extension routes for every
/// other path, each request first past [`access::guard`], at the root and under `state`'s URL
/// prefix ([`UrlPrefix::serve`]). Request bodies over `max_body_bytes` get 413; with allowed
/// hosts, a request naming another host is refused first ([`hosts::guard`]).
///
/// An episode's routes are registered under `/episodes/{id}` in the same router as the root's
/// rather than nested: a nested router costs every request a second routing, a path rewrite and
/// several boxed services cloned.
pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    let prefix = state.url_prefix.clone();
    let router = mounts().into_iter().fold(Router::new(), |router, mount| {
        router.route(&mount.path, mount.handlers)
    });
    let router = router
        .fallback(extensions::dispatch_root)
        .layer(middleware::map_response(method_not_allowed_body))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(middleware::from_fn_with_state(
            state.access.clone(),
            access::guard,
        ));
    let router = match state.allowed_hosts.clone() {
        Some(allowed) => router.layer(middleware::from_fn_with_state(allowed, hosts::guard)),
        None => router,
    };
    prefix.serve(router.with_state(state))
}

/// How a server serves its host.
#[derive(Clone)]
pub struct ServeConfig {
    /// The largest request body, in bytes (413 beyond it).
    pub max_body_bytes: usize,
    /// Who may call what.
    pub access: Access,
    /// How often a quiet agent turn's stream gets `: ping`.
    pub agent_heartbeat: Duration,
    /// The prefix the server is also reached under.
    pub url_prefix: UrlPrefix,
    /// The hosts requests must name (`Host`, `Origin`); every host when none.
    pub allowed_hosts: Option<hosts::AllowedHosts>,
}

impl Default for ServeConfig {
    /// Bodies up to [`DEFAULT_MAX_BODY_BYTES`], open to every caller, a ping every 30 s, no
    /// URL prefix.
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            access: Access::open(),
            agent_heartbeat: Duration::from_secs(30),
            url_prefix: UrlPrefix::default(),
            allowed_hosts: None,
        }
    }
}

/// Why a server could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The host serves no environment (its computers are served by [`computers::router`]).
    #[error("the host serves no environment")]
    NoEnvironment,
    /// The root episode could not be created.
    #[error("creating the root episode: {0}")]
    Root(#[from] CreateError),
    /// A tool's MCP listing could not be encoded.
    #[error("encoding the MCP tool listing: {0}")]
    Listing(#[from] serde_json::Error),
}

/// The host's root episode (of its first environment) and the router that serves it all.
///
/// # Errors
/// [`AppError`] when the root episode cannot be created.
pub async fn app(host: Arc<Host>, config: ServeConfig) -> Result<(Router, AppState), AppError> {
    let mcp = Arc::new(Endpoints::new(&host)?);
    let first = host
        .environments()
        .first()
        .ok_or(AppError::NoEnvironment)?
        .name
        .clone();
    let root = host.create_episode(&first).await?;
    let state = AppState {
        host,
        root,
        mcp,
        deployments: Arc::default(),
        access: config.access,
        agent_heartbeat: config.agent_heartbeat,
        url_prefix: config.url_prefix,
        allowed_hosts: config.allowed_hosts,
    };
    Ok((router(state.clone(), config.max_body_bytes), state))
}

/// Rewrites a path with repeated slashes (`/episodes/x//mcp`, as a client joining `url` and a
/// card path makes it) into its single-slash form.
fn collapse_slashes(mut request: Request) -> Request {
    let path = request.uri().path();
    if !path.contains("//") {
        return request;
    }
    let mut collapsed = String::with_capacity(path.len());
    for c in path.chars() {
        if !(c == '/' && collapsed.ends_with('/')) {
            collapsed.push(c);
        }
    }
    if let Some(query) = request.uri().query() {
        collapsed.push('?');
        collapsed.push_str(query);
    }
    if let Ok(uri) = collapsed.parse() {
        *request.uri_mut() = uri;
    }
    request
}

/// How long, once shutdown begins, requests in flight may take to finish before the server
/// closes every connection still open (standalone MCP streams never finish on their own).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` completes (then requests in flight get
/// [`SHUTDOWN_GRACE`] to finish), with `TCP_NODELAY` on every
/// connection (an SSE answer goes out as a header write and a data write, and Nagle's algorithm
/// would hold the second back until the client's delayed ACK, about 40 ms a call), repeated
/// slashes in paths collapsed, and idle episodes of `state`'s host evicted every second.
///
/// # Errors
/// The I/O error that stopped the server.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let evictor = spawn_evictor(state);
    let served = run(listener, router, shutdown).await;
    evictor.abort();
    served
}

/// A task on the current runtime that evicts idle episodes of `state`'s host every
/// [`EVICTION_INTERVAL`] (and sweeps the MCP sessions of those evicted) until aborted.
fn spawn_evictor(state: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(EVICTION_INTERVAL);
        loop {
            every.tick().await;
            let evicted = state.host.evict_idle(Some(state.root.id()));
            state.mcp.sweep(&state.host, evicted > 0);
        }
    })
}

/// Serves `router` on `listener` until `shutdown` completes (then gives open connections
/// [`SHUTDOWN_GRACE`] to finish), with `TCP_NODELAY` on every connection and repeated slashes
/// in paths collapsed: [`serve`] without a host's episodes to evict (a computers' server).
///
/// # Errors
/// The I/O error that stopped the server.
pub async fn run(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
    });
    run_on(listener, router, shutdown).await
}

/// [`run`] over any axum listener, whose connections come with their options set.
async fn run_on<L>(
    listener: L,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    let service = router.map_request(collapse_slashes);
    let (signalled, grace) = tokio::sync::oneshot::channel::<()>();
    let served = axum::serve(
        listener,
        axum::ServiceExt::<Request>::into_make_service(service),
    )
    .with_graceful_shutdown(async move {
        shutdown.await;
        let _ = signalled.send(());
    })
    .into_future();
    tokio::select! {
        served = served => served,
        () = async {
            if grace.await.is_err() {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => {
            tracing::info!("closing the connections still open {SHUTDOWN_GRACE:?} after shutdown began");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collapsed(uri: &str) -> String {
        let request = Request::builder()
            .uri(uri)
            .body(axum::body::Body::empty())
            .unwrap();
        collapse_slashes(request).uri().to_string()
    }

    #[test]
    fn repeated_slashes_collapse_and_queries_stay() {
        assert_eq!(collapsed("/episodes/a//mcp"), "/episodes/a/mcp");
        assert_eq!(collapsed("//x///y?a=1//2"), "/x/y?a=1//2");
        assert_eq!(collapsed("/plain?x=1"), "/plain?x=1");
    }
}
