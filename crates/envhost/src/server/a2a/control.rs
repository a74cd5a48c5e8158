//! The deployments API, a control surface the operator's token guards (docs/http-api.md#deployments):
//! `POST /agents/{name}/deployments`, `GET /deployments`, `GET` and `DELETE /deployments/{id}`.

use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Map, Value, json};

use super::card::CARD_PATH;
use super::deployment::Deployment;
use crate::server::reply;
use crate::server::state::{AppState, Id};
use envhost_protocol::error::CodedError;

/// `{"id", "agent", "tasks", "running", "url", "card_url"}`: the deployment's summary and
/// where it is served, after the server's URL prefix.
fn located(state: &AppState, deployment: &Deployment) -> Value {
    let mut fields: Map<String, Value> = deployment.summary();
    let base = state.url_prefix.url(&deployment.base_path());
    fields.insert("card_url".into(), format!("{base}{CARD_PATH}").into());
    fields.insert("url".into(), base.into());
    Value::Object(fields)
}

fn deployment_not_found(id: &str) -> Response {
    let mut error = CodedError::new("deployment_not_found", format!("no deployment {id}"));
    error.status = 404;
    reply::coded(&error)
}

/// `POST /agents/{name}/deployments` with an empty body or `{}` → `201 {"id", "agent", "url",
/// "card_url", "tasks": 0, "running": 0}` with a `Location`: a new A2A agent serving agent
/// `name` at `url` (docs/agent-env.md#deployments). Errors: 404 `agent_not_found`, 400
/// `invalid_params` for any other body, 503 `too_many_deployments`.
pub async fn create(
    State(state): State<AppState>,
    axum::extract::Path(name): axum::extract::Path<String>,
    body: Bytes,
) -> Response {
    let empty = body.iter().all(u8::is_ascii_whitespace)
        || matches!(serde_json::from_slice::<Value>(&body), Ok(Value::Object(o)) if o.is_empty());
    if !empty {
        return reply::coded(&CodedError::invalid_params(
            "a deployment is created with an empty body or {}; configure it with its agent-config extension",
        ));
    }
    if state.host.agent_environment(&name).is_none() {
        let mut error = CodedError::new("agent_not_found", format!("no agent {name:?}"));
        error.status = 404;
        return reply::coded(&error);
    }
    match state.deployments.create(&name) {
        Ok(deployment) => {
            let located = located(&state, &deployment);
            let mut response = reply::json(StatusCode::CREATED, &located);
            let location = state
                .url_prefix
                .url(&format!("/deployments/{}", deployment.id()));
            if let Ok(location) = HeaderValue::from_str(&location) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            response
        }
        Err(e) => {
            let mut error = CodedError::new("too_many_deployments", e.to_string());
            error.status = 503;
            error.retryable = true;
            reply::coded_retry(&error)
        }
    }
}

/// `GET /deployments` → `{"deployments": [summary, ...]}`, sorted by id.
pub async fn list(State(state): State<AppState>) -> Response {
    let all: Vec<Value> = state
        .deployments
        .list()
        .iter()
        .map(|d| located(&state, d))
        .collect();
    reply::json(StatusCode::OK, &json!({"deployments": all}))
}

/// `GET /deployments/{id}` → its summary, or 404 `deployment_not_found`.
pub async fn show(State(state): State<AppState>, Id(id): Id) -> Response {
    match state.deployments.get(&id) {
        Some(deployment) => reply::json(StatusCode::OK, &located(&state, &deployment)),
        None => deployment_not_found(&id),
    }
}

/// `DELETE /deployments/{id}` → `{"id", "deleted": true}`: its running tasks stop and its URL
/// serves no more; 404 `deployment_not_found`.
pub async fn delete(State(state): State<AppState>, Id(id): Id) -> Response {
    if state.deployments.delete(&id) {
        reply::json(StatusCode::OK, &json!({"id": id, "deleted": true}))
    } else {
        deployment_not_found(&id)
    }
}
