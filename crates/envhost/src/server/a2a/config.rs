//! The configuration extensions of a deployment, with the framework's shapes and statuses
//! (docs/agent-env.md#extensions): `mcp-config/v1` (`POST` adds a server, `GET` lists them)
//! and `agent-config/v1` (`POST` sets fields, `GET` reads them).

use std::sync::Arc;

use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use serde_json::{Map, Value, json};

use super::deployment::{Deployment, lock};
use super::settings::Settings;
use super::tools::McpServer;
use super::wire::{self, field_error};
use crate::server::state::AppState;

/// The most MCP servers one deployment may have.
pub const MAX_MCP_SERVERS: usize = 64;

/// The fields `POST /ext/mcp-config` takes.
const MCP_FIELDS: [&str; 3] = ["url", "name", "headers"];

/// `body` as a JSON object, or the framework's 400.
pub fn object_body(body: &[u8]) -> Result<Map<String, Value>, Response> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(wire::text(
            StatusCode::BAD_REQUEST,
            "request body must be a JSON object",
        )),
        Err(e) => Err(wire::text(StatusCode::BAD_REQUEST, e.to_string())),
    }
}

/// A `GET` with a query is refused, as the framework refuses request fields on a read.
pub fn no_query(query: Option<&str>, method: &str) -> Result<(), Response> {
    match query {
        Some(q) if !q.is_empty() => Err(wire::text(
            StatusCode::BAD_REQUEST,
            format!("{method} does not accept request fields"),
        )),
        _ => Ok(()),
    }
}

/// `POST /ext/mcp-config {"url", "name"?, "headers"?}` → `{"status": "added", "name", "url"}`.
/// 400 for a body that is not such an object (pydantic's list, or `missing required fields:
/// ['url']`, or `url must not be empty`), 409 for a URL or a name already added.
pub fn add_mcp(state: &AppState, deployment: &Arc<Deployment>, body: &Bytes) -> Response {
    let body = match object_body(body) {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let extra: Vec<Value> = body
        .keys()
        .filter(|k| !MCP_FIELDS.contains(&k.as_str()))
        .map(|k| field_error("extra_forbidden", k, "Extra inputs are not permitted"))
        .collect();
    if !extra.is_empty() {
        return wire::invalid(extra);
    }
    let url = match body.get("url") {
        None => {
            return wire::text(StatusCode::BAD_REQUEST, "missing required fields: ['url']");
        }
        Some(Value::String(url)) => url.trim().to_owned(),
        Some(_) => {
            let error = field_error("string_type", "url", "Input should be a valid string");
            return wire::invalid(vec![error]);
        }
    };
    if url.is_empty() {
        return wire::text(StatusCode::BAD_REQUEST, "url must not be empty");
    }
    let name = match body.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) if !name.trim().is_empty() => Some(name.trim().to_owned()),
        Some(Value::String(_)) => {
            return wire::text(StatusCode::BAD_REQUEST, "name must not be empty");
        }
        Some(_) => {
            let error = field_error("string_type", "name", "Input should be a valid string");
            return wire::invalid(vec![error]);
        }
    };
    let headers = match body.get("headers") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(headers)) => headers.clone(),
        Some(_) => {
            let error = field_error("dict_type", "headers", "Input should be a valid dictionary");
            return wire::invalid(vec![error]);
        }
    };
    let name =
        name.unwrap_or_else(|| format!("mcp_{}", &uuid::Uuid::new_v4().simple().to_string()[..8]));
    {
        let servers = lock(&deployment.servers);
        if let Some(same) = servers.iter().find(|s| s.url == url) {
            return wire::text(
                StatusCode::CONFLICT,
                format!("MCP URL '{url}' already registered as '{}'", same.name),
            );
        }
        if servers.iter().any(|s| s.name == name) {
            return wire::text(
                StatusCode::CONFLICT,
                format!("MCP name '{name}' is already registered"),
            );
        }
        if servers.len() >= MAX_MCP_SERVERS {
            return wire::text(
                StatusCode::BAD_REQUEST,
                format!("a deployment takes at most {MAX_MCP_SERVERS} MCP servers"),
            );
        }
    }
    let server = match McpServer::bind(state, name.clone(), url.clone(), &headers) {
        Ok(server) => server,
        Err(why) => return wire::text(StatusCode::BAD_REQUEST, why),
    };
    let mut servers = lock(&deployment.servers);
    if servers.iter().any(|s| s.url == url || s.name == name) {
        return wire::text(
            StatusCode::CONFLICT,
            format!("MCP URL '{url}' or name '{name}' was registered meanwhile"),
        );
    }
    servers.push(server);
    wire::json_as_is(
        StatusCode::OK,
        &json!({"status": "added", "name": name, "url": url}),
    )
}

/// `GET /ext/mcp-config` → `{"mcp_servers": {name: {"url", "has_headers"}}}`.
pub fn list_mcp(deployment: &Deployment) -> Response {
    let servers: Map<String, Value> = lock(&deployment.servers)
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                json!({"url": s.url, "has_headers": s.has_headers}),
            )
        })
        .collect();
    wire::json_as_is(StatusCode::OK, &json!({"mcp_servers": servers}))
}

/// `POST /ext/agent-config {field: value, ...}` → `{"status": "updated"}`; 400 with pydantic's
/// list for a field not supported or a value of the wrong type, nothing changed.
pub fn set_config(deployment: &Deployment, body: &Bytes) -> Response {
    let body = match object_body(body) {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    if Settings::has_blank_name(&body) {
        return wire::text(StatusCode::BAD_REQUEST, "name must be a non-empty string");
    }
    match lock(&deployment.settings).apply(&body) {
        Ok(()) => wire::json_as_is(StatusCode::OK, &json!({"status": "updated"})),
        Err(errors) => wire::invalid(errors),
    }
}

/// `GET /ext/agent-config` → `{"config": {the fields set}}`.
pub fn get_config(deployment: &Deployment) -> Response {
    let config = lock(&deployment.settings).to_json();
    wire::json_as_is(StatusCode::OK, &json!({"config": config}))
}
