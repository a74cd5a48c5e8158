//! `POST /tools/disable` and `POST /tools/enable` (§7.1), served when the environment enforces
//! tool access.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;

use super::mount::Mount;
use super::reply;
use crate::protocol::tool_access::Change;

fn change(mount: &Mount, body: &[u8], disabled: bool) -> Response {
    match Change::parse(body) {
        Ok(change) => reply::json(StatusCode::OK, &mount.change_rules(&change, disabled)),
        Err(e) => reply::coded(&e),
    }
}

/// Disables tools for a role; answers `{"role", "disabled", "allowed"}`.
pub async fn disable(State(mount): State<Arc<Mount>>, body: Bytes) -> Response {
    change(&mount, &body, true)
}

/// Enables tools for a role; answers `{"role", "disabled", "allowed"}`.
pub async fn enable(State(mount): State<Arc<Mount>>, body: Bytes) -> Response {
    change(&mount, &body, false)
}
