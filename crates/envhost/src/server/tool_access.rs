//! `POST /tools/disable` and `POST /tools/enable` (protocol.md#rule-changes), served when the
//! environment enforces tool access (404 otherwise).

use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::StatusCode;

use super::reply;
use super::state::Current;
use envhost_protocol::tool_access::Change;

fn change(Current(episode): Current, body: &[u8], disabled: bool) -> Response {
    if !episode.catalog().description.tool_access {
        return (StatusCode::NOT_FOUND, "Not Found").into_response();
    }
    match Change::parse(body) {
        Ok(change) => reply::json(
            StatusCode::OK,
            &episode.change_tool_access(&change, disabled),
        ),
        Err(e) => reply::coded(&e),
    }
}

/// Disables tools for a role; answers `{"role", "disabled", "allowed"}`.
pub async fn disable(episode: Current, body: Bytes) -> Response {
    change(episode, &body, true)
}

/// Enables tools for a role; answers `{"role", "disabled", "allowed"}`.
pub async fn enable(episode: Current, body: Bytes) -> Response {
    change(episode, &body, false)
}
