//! axum: the HTTP surface of an episode (§0): the card, the data plane, MCP, extensions, tool
//! access and readiness, all on one listener. The server glues protocol and runtime together
//! and owns no environment logic.

mod catalog;
mod data_plane;
mod extensions;
mod reply;
mod mcp;
mod mount;
mod tool_access;

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use ::http::{HeaderValue, StatusCode, header};
use serde_json::json;

pub use catalog::{Catalog, CatalogError};
pub use mount::Mount;

use crate::protocol::card::{MCP_PATH, RPC_PATH, WELL_KNOWN_PATH};

/// The default cap on a request body: 64 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 << 20;

async fn card(State(mount): State<Arc<Mount>>) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        mount.catalog.card.clone(),
    )
        .into_response()
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
        .route_service(MCP_PATH, mcp::service(mount.clone(), max_body_bytes));
    if mount.catalog.description.tool_access {
        router = router
            .route("/tools/disable", post(tool_access::disable))
            .route("/tools/enable", post(tool_access::enable));
    }
    router
        .fallback(extensions::dispatch)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(mount)
}
