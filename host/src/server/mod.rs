//! axum: the HTTP surface of an episode (§0): the card, the data plane, MCP, extensions, tool
//! access and readiness, all on one listener. The server glues protocol and runtime together
//! and owns no environment logic.

mod catalog;
mod data_plane;
mod extensions;
mod mcp;
mod mount;
mod reply;
mod tool_access;

use std::sync::Arc;

use ::http::{HeaderValue, StatusCode, header};
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::serve::ListenerExt;
use serde_json::json;

pub use catalog::{Catalog, CatalogError};
pub use mount::Mount;

use crate::protocol::card::{MCP_PATH, RPC_PATH, WELL_KNOWN_PATH};
use crate::runtime::{CallError, Environment, Episode, Limits, LoadError, Runtime};
use crate::transfers::{Resolver, TransferConfig};

/// The default cap on a request body: 64 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 << 20;

async fn card(State(mount): State<Arc<Mount>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        mount.catalog.card.clone(),
    )
        .into_response()
}

/// `/mcp/` redirects to `/mcp`, as Starlette does for the reference (relative, so that it holds
/// wherever the episode is mounted).
async fn mcp_slash() -> Response {
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

async fn ready() -> Response {
    reply::json(StatusCode::OK, &json!({"status": "ready"}))
}

/// The routes of one episode: `GET /.well-known/agent-env.json`, `POST /agentenv`, `/mcp`,
/// `GET /ready`, `POST /tools/{disable,enable}` when tool access is on, and every extension
/// route. Request bodies over `max_body_bytes` get 413.
pub fn router(mount: Arc<Mount>, max_body_bytes: usize) -> Router {
    let mut router = Router::new()
        .route(WELL_KNOWN_PATH, get(card))
        .route(RPC_PATH, post(data_plane::rpc))
        .route("/ready", get(ready))
        .route(MCP_PATH, mcp::routes())
        .route("/mcp/", any(mcp_slash));
    if mount.catalog.description.tool_access {
        router = router
            .route("/tools/disable", post(tool_access::disable))
            .route("/tools/enable", post(tool_access::enable));
    }
    router
        .fallback(extensions::dispatch)
        .layer(middleware::map_response(method_not_allowed_body))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(mount)
}

/// Serves `router` on `listener` until `shutdown` completes, with `TCP_NODELAY` on every
/// connection: an SSE answer goes out as a header write and a data write, and Nagle's algorithm
/// would hold the second back until the client's delayed ACK (about 40 ms a call).
///
/// # Errors
/// The I/O error that stopped the server.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

/// What `envhost serve` serves.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The environment component.
    pub component: std::path::PathBuf,
    /// The card's name; the component's own when `None`.
    pub name: Option<String>,
    /// Each episode's limits.
    pub limits: Limits,
    /// Where `data/add` may fetch files from.
    pub transfers: TransferConfig,
    /// The largest request body accepted.
    pub max_body_bytes: usize,
}

impl ServeOptions {
    /// Default options for `component`.
    pub fn new(component: impl Into<std::path::PathBuf>) -> Self {
        Self {
            component: component.into(),
            name: None,
            limits: Limits::default(),
            transfers: TransferConfig::default(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// Why an environment cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The component could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A tool's schema does not compile.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The first episode could not be instantiated.
    #[error(transparent)]
    Episode(#[from] CallError),
    /// The HTTP client for `data/add` could not be built.
    #[error("{0}")]
    Transfers(String),
}

/// Loads the component of `options` and builds the router that serves one episode of it at
/// the root; answers the router and the environment's catalog.
///
/// # Errors
/// [`ServeError`] naming what failed.
pub async fn app(
    runtime: &Runtime,
    options: &ServeOptions,
) -> Result<(Router, Arc<Catalog>), ServeError> {
    let environment = Environment::load(
        runtime,
        &options.component,
        options.name.clone(),
        options.limits,
    )
    .await?;
    let catalog = Arc::new(Catalog::new(environment.description().clone())?);
    let episode = Episode::new(Arc::new(environment), "root".into()).await?;
    let resolver = Resolver::new(&options.transfers).map_err(ServeError::Transfers)?;
    let mount = Arc::new(Mount::new(catalog.clone(), episode, resolver));
    Ok((router(mount, options.max_body_bytes), catalog))
}
