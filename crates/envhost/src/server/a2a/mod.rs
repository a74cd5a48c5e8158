//! Agents as agentenv A2A agents (docs/agent-env.md): *deployments* of a host's agents, each
//! served at its own base URL `/deployments/{id}/{secret}` the way the agentenv framework serves
//! an agent (its card at `/.well-known/agent.json` and `agent-card.json`, `GET /health`,
//! JSON-RPC at `/a2a`, the framework's extensions under `/ext/`: agent-config, mcp-config,
//! trajectory and snapshot), one A2A task being one turn
//! of the agent. The base URL's secret is the deployment's credential, as an episode's agent
//! URL is; creating, listing and deleting deployments are control routes ([`control`]).

mod card;
mod config;
pub mod control;
mod deployment;
mod rpc;
mod run;
mod settings;
mod snapshot;
mod tasks;
mod tools;
mod trajectory;
mod wire;

pub use deployment::{DEPLOYMENT_PREFIX, Deployment, Deployments, MAX_DEPLOYMENTS};

use axum::extract::{RawPathParams, Request, State};
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::json;

use super::reply;
use super::state::AppState;
use envhost_protocol::error::CodedError;

/// The largest body a deployment's routes read, in bytes (a message may carry images).
pub const MAX_BODY_BYTES: usize = 16 << 20;

/// The paths a deployment serves after its base, with the verbs each answers.
const PATHS: [(&str, &[Method]); 8] = [
    ("/.well-known/agent.json", &[Method::GET]),
    ("/.well-known/agent-card.json", &[Method::GET]),
    ("/health", &[Method::GET]),
    ("/a2a", &[Method::POST]),
    ("/ext/mcp-config", &[Method::GET, Method::POST]),
    ("/ext/agent-config", &[Method::GET, Method::POST]),
    ("/ext/trajectory", &[Method::POST]),
    ("/ext/snapshot", &[Method::POST, Method::PUT]),
];

/// The id, the secret and the path after them of a deployment's route
/// (`/deployments/{id}/{secret}/...`); none for any other path.
pub fn deployment_route(path: &str) -> Option<(&str, &str, &str)> {
    let rest = path.strip_prefix(DEPLOYMENT_PREFIX)?.strip_prefix('/')?;
    let (id, rest) = rest.split_once('/')?;
    let (secret, _) = rest.split_once('/')?;
    let after = &rest[secret.len()..];
    let well_formed = !id.is_empty() && !secret.is_empty() && after.len() > 1;
    well_formed.then_some((id, secret, after))
}

/// 403 `deployment_url_refused`: the same answer whether the id or the secret is wrong.
fn refused() -> Response {
    let mut error = CodedError::new(
        "deployment_url_refused",
        "this URL opens no deployment: its id or its secret is wrong, or the deployment was deleted",
    );
    error.status = 403;
    error.hint = Some("use the whole url that creating the deployment answered".into());
    reply::coded(&error)
}

/// Every request under `/deployments/{id}/{secret}/`: the deployment's routes.
pub async fn serve(
    State(state): State<AppState>,
    params: RawPathParams,
    request: Request,
) -> Response {
    let param = |name: &str| {
        params
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_owned())
    };
    let (Some(id), Some(secret), Some(rest)) = (param("id"), param("secret"), param("rest")) else {
        return refused();
    };
    let deployment = state.deployments.get(&id);
    let admitted = deployment
        .as_ref()
        .map_or_else(|| NO_SECRET.matches(&secret), |d| d.admits(&secret));
    let (Some(deployment), true) = (deployment, admitted) else {
        return refused();
    };
    let path = format!("/{rest}");
    let Some((_, methods)) = PATHS.iter().find(|(p, _)| *p == path) else {
        return wire::text(StatusCode::NOT_FOUND, "Not Found");
    };
    let method = match request.method() {
        &Method::HEAD => Method::GET,
        other => other.clone(),
    };
    if !methods.contains(&method) {
        let allow = methods
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        let mut response = wire::text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
        if let Ok(allow) = HeaderValue::from_str(&allow) {
            response.headers_mut().insert(header::ALLOW, allow);
        }
        return response;
    }
    let query = request.uri().query().map(str::to_owned);
    let body = match axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            return wire::text(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is over {MAX_BODY_BYTES} bytes"),
            );
        }
    };
    match (method, path.as_str()) {
        (_, "/.well-known/agent.json" | "/.well-known/agent-card.json") => {
            wire::json_as_is(StatusCode::OK, &card::card(&deployment))
        }
        (_, "/health") => wire::json_as_is(StatusCode::OK, &json!({"status": "ok"})),
        (_, "/a2a") => rpc::handle(state, deployment, body).await,
        (Method::POST, "/ext/mcp-config") => config::add_mcp(&state, &deployment, &body),
        (_, "/ext/mcp-config") => match config::no_query(query.as_deref(), "list") {
            Ok(()) => config::list_mcp(&deployment),
            Err(refused) => refused,
        },
        (Method::POST, "/ext/agent-config") => config::set_config(&deployment, &body),
        (_, "/ext/agent-config") => match config::no_query(query.as_deref(), "get") {
            Ok(()) => config::get_config(&deployment),
            Err(refused) => refused,
        },
        (Method::POST, "/ext/snapshot") => snapshot::save(&state, &deployment, &body).await,
        (_, "/ext/snapshot") => snapshot::load(&state, &deployment, &body).await,
        (_, "/ext/trajectory") => {
            trajectory::read(&deployment, &body, &state.host.egress_client()).await
        }
        _ => wire::text(StatusCode::NOT_FOUND, "Not Found"),
    }
}

/// What a secret is compared with when the id names no deployment, so that the refusal takes
/// the time a wrong secret's does.
static NO_SECRET: std::sync::LazyLock<crate::ids::Secret> =
    std::sync::LazyLock::new(crate::ids::Secret::fresh);
