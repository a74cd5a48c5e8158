//! What every route shares, and the episode a request addresses.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{FromRequestParts, RawPathParams};
use axum::response::Response;
use http::request::Parts;

use super::a2a::Deployments;
use super::access::Access;
use super::hosts::AllowedHosts;
use super::mcp::Endpoints;
use super::prefix::UrlPrefix;
use super::reply;
use crate::embedding::{Episode, Host};
use crate::ids::Secret;
use envhost_protocol::error::CodedError;

/// The server's state.
#[derive(Clone)]
pub struct AppState {
    /// The host.
    pub host: Arc<Host>,
    /// The episode served at the root (of the first environment; never evicted).
    pub root: Arc<Episode>,
    /// The episodes' MCP endpoints.
    pub mcp: Arc<Endpoints>,
    /// The deployments of the host's agents as A2A agents.
    pub deployments: Arc<Deployments>,
    /// Who may call what.
    pub access: Access,
    /// How often a quiet agent turn's stream gets `: ping`.
    pub agent_heartbeat: Duration,
    /// The prefix the server is also reached under, which the URLs it hands out carry.
    pub url_prefix: UrlPrefix,
    /// The hosts requests must name (`Host`, `Origin`); every host when none.
    pub allowed_hosts: Option<AllowedHosts>,
}

/// The episode a request addresses: the one of `/episodes/{id}/...` or of an agent URL
/// `/agent/{id}/{secret}/...` (whose secret it must carry), or the root episode.
pub struct Current(pub Arc<Episode>);

/// 404 `episode_not_found`.
pub fn episode_not_found(id: &str) -> Response {
    let mut error = CodedError::new("episode_not_found", format!("no episode {id}"));
    error.status = 404;
    reply::coded(&error)
}

/// 400 `invalid_params`: a path whose parameters are not UTF-8, which can name nothing.
fn path_not_utf8() -> Response {
    reply::coded(&CodedError::invalid_params(
        "the path is not UTF-8 once percent-decoded",
    ))
}

/// The path parameters of the request's route: none for a route without any (the root's), and
/// 400 for a path that is not UTF-8.
async fn path_params(
    parts: &mut Parts,
    state: &AppState,
) -> Result<Option<RawPathParams>, Response> {
    match RawPathParams::from_request_parts(parts, state).await {
        Ok(params) => Ok(Some(params)),
        Err(RawPathParamsRejection::MissingPathParams(_)) => Ok(None),
        Err(_) => Err(path_not_utf8()),
    }
}

/// The parameter `name` among `params`.
fn param<'a>(params: &'a RawPathParams, name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// The `{id}` parameter among `params`.
fn id_param(params: &RawPathParams) -> Option<&str> {
    param(params, "id")
}

impl FromRequestParts<AppState> for Current {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let params = path_params(parts, state).await?;
        let Some(params) = params else {
            return Ok(Self(state.root.clone()));
        };
        let Some(id) = id_param(&params) else {
            return Ok(Self(state.root.clone()));
        };
        let episode = state.host.episode(id);
        match param(&params, "secret") {
            None => episode.map(Self).ok_or_else(|| episode_not_found(id)),
            Some(secret) => {
                let held = episode.as_ref().map_or(&*NO_SECRET, |e| e.secret());
                let matches = held.matches(secret);
                match episode {
                    Some(episode) if matches => Ok(Self(episode)),
                    _ => Err(super::access::agent_url_refused()),
                }
            }
        }
    }
}

/// What a secret is compared with when the id names no episode, so that the refusal takes
/// the time a wrong secret's does.
static NO_SECRET: std::sync::LazyLock<Secret> = std::sync::LazyLock::new(Secret::fresh);

/// The `{id}` of `/episodes/{id}` or `/snapshots/{id}`; 400 `invalid_params` when it is not
/// UTF-8.
pub struct Id(pub String);

impl FromRequestParts<AppState> for Id {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let params = path_params(parts, state).await?;
        params
            .as_ref()
            .and_then(id_param)
            .map(|id| Self(id.to_owned()))
            .ok_or_else(path_not_utf8)
    }
}
