//! What every route shares, and the episode a request addresses.

use std::sync::Arc;

use axum::extract::{FromRequestParts, RawPathParams};
use axum::response::Response;
use http::request::Parts;

use super::reply;
use crate::host::{Episode, Host};
use crate::protocol::error::CodedError;

/// The server's state.
#[derive(Clone)]
pub struct AppState {
    /// The host.
    pub host: Arc<Host>,
    /// The episode served at the root (of the first environment; never evicted).
    pub root: Arc<Episode>,
}

/// The episode a request addresses: the one of `/episodes/{id}/...`, or the root episode.
pub struct Current(pub Arc<Episode>);

/// 404 `episode_not_found`.
pub fn episode_not_found(id: &str) -> Response {
    let mut error = CodedError::new("episode_not_found", format!("no episode {id}"));
    error.status = 404;
    reply::coded(&error)
}

impl FromRequestParts<AppState> for Current {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let params = RawPathParams::from_request_parts(parts, state).await.ok();
        let id = params
            .as_ref()
            .and_then(|p| p.iter().find(|(name, _)| *name == "id").map(|(_, id)| id));
        match id {
            None => Ok(Self(state.root.clone())),
            Some(id) => state
                .host
                .episode(id)
                .map(Self)
                .ok_or_else(|| episode_not_found(id)),
        }
    }
}
