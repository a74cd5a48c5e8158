//! The computer a request addresses, and the answers of what a computer does not serve: a path
//! (404 `Not Found`) or a verb (405 with `Allow`), each given only once the computer is found,
//! so that a request to a computer that does not exist is always its 404.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{FromRequestParts, Path, RawPathParams};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderValue, StatusCode, header};

use super::Shared;
use crate::embedding::ComputerEpisode;
use crate::ids::Secret;
use crate::server::{access, reply};
use envhost_protocol::error::CodedError;

/// The computer a request addresses: the one of `/episodes/{id}/...` or of an agent URL
/// `/agent/{id}/{secret}/...` (whose secret it must carry), or the root computer.
pub struct CurrentComputer(pub Arc<ComputerEpisode>);

/// 404 `episode_not_found`, naming `id`.
pub fn episode_not_found(id: &str) -> Response {
    let mut error = CodedError::new("episode_not_found", format!("no episode {id:?}"));
    error.status = 404;
    reply::coded(&error)
}

/// What a secret is compared with when the id names no computer, so that the refusal takes the
/// time a wrong secret's does.
static NO_SECRET: LazyLock<Secret> = LazyLock::new(Secret::fresh);

impl FromRequestParts<Shared> for CurrentComputer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &Shared) -> Result<Self, Response> {
        let params = match RawPathParams::from_request_parts(parts, state).await {
            Ok(params) => params,
            Err(RawPathParamsRejection::MissingPathParams(_)) => {
                return Ok(Self(state.root.clone()));
            }
            Err(_) => return Err(path_rejection(parts, state).await),
        };
        let param = |name: &str| params.iter().find(|(key, _)| *key == name).map(|(_, v)| v);
        let Some(id) = param("id") else {
            return Ok(Self(state.root.clone()));
        };
        let computer = state.host.computer(id);
        match param("secret") {
            None => computer.map(Self).ok_or_else(|| episode_not_found(id)),
            Some(secret) => {
                let held = computer.as_ref().map_or(&*NO_SECRET, |c| c.secret());
                let matches = held.matches(secret);
                match computer {
                    Some(computer) if matches => Ok(Self(computer)),
                    _ => Err(access::agent_url_refused()),
                }
            }
        }
    }
}

/// The answer to a path whose parameters are not UTF-8 once percent-decoded: axum's `Path`
/// rejection (400, naming the parameter).
async fn path_rejection(parts: &mut Parts, state: &Shared) -> Response {
    match Path::<HashMap<String, String>>::from_request_parts(parts, state).await {
        Err(rejection) => rejection.into_response(),
        Ok(_) => StatusCode::BAD_REQUEST.into_response(),
    }
}

/// 404 `Not Found`, a computer's answer to a path it does not serve.
pub async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found").into_response()
}

/// A path under `/episodes/{id}/` that no route of a computer matches: its 404 once the
/// computer is found.
pub async fn unserved_path(_: CurrentComputer) -> Response {
    not_found().await
}

/// 405 with `Allow: allow` and no body, as axum answers a verb a route does not serve, once the
/// computer is found.
pub fn method_not_allowed(allow: &'static str) -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, HeaderValue::from_static(allow))],
    )
        .into_response()
}
