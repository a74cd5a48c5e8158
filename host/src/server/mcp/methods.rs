//! The MCP methods an environment answers (§5.2): `initialize`, `ping`, `tools/list`,
//! `tools/call`, and empty resource and prompt lists.

use http::HeaderMap;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};

use super::tools::{self, CallParams};
use super::wire::{
    INTERNAL_ERROR, INVALID_PARAMS, LATEST_VERSION, METHOD_NOT_FOUND, SUPPORTED_VERSIONS,
};
use crate::host::Episode;
use crate::protocol::role::{Caller, ROLE_HEADER, mcp_caller};

/// A JSON-RPC error answer: code and message.
pub type MethodError = (i64, String);

#[derive(Deserialize, Default)]
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

#[derive(Deserialize, Default)]
struct InitializeParams {
    #[serde(rename = "protocolVersion", default)]
    protocol_version: Option<String>,
}

fn params<T: DeserializeOwned + Default>(params: Option<&RawValue>) -> Result<T, MethodError> {
    match params {
        None => Ok(T::default()),
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|_| (INVALID_PARAMS, "Invalid request parameters".to_owned())),
    }
}

fn raw(value: &impl serde::Serialize) -> Result<Box<RawValue>, MethodError> {
    to_raw_value(value).map_err(|e| (INTERNAL_ERROR, e.to_string()))
}

/// The caller of a request of `session` (§6).
fn caller(meta: Option<&Map<String, Value>>, headers: &HeaderMap, session: &str) -> Caller {
    let role = headers.get(ROLE_HEADER).and_then(|v| v.to_str().ok());
    mcp_caller(meta, role, Some(session))
}

/// `initialize`: the client's protocol version when served, else the latest.
fn initialize(episode: &Episode, params: Option<&RawValue>) -> Result<Box<RawValue>, MethodError> {
    let asked: InitializeParams = self::params(params)?;
    let version = asked
        .protocol_version
        .filter(|v| SUPPORTED_VERSIONS.contains(&v.as_str()))
        .unwrap_or_else(|| LATEST_VERSION.to_owned());
    let mut result = episode.catalog().initialize_result.clone();
    result.insert("protocolVersion".into(), Value::String(version));
    raw(&result)
}

/// Answers request `method` of `session`; the error is a JSON-RPC error of the request.
pub async fn handle(
    episode: &Episode,
    method: &str,
    params: Option<&RawValue>,
    headers: &HeaderMap,
    session: &str,
) -> Result<Box<RawValue>, MethodError> {
    let empty = |key: &str| raw(&serde_json::json!({ key: [] }));
    match method {
        "initialize" => initialize(episode, params),
        "ping" => raw(&serde_json::json!({})),
        "tools/list" => {
            let p: MetaOnly = self::params(params)?;
            tools::list(episode, &caller(p.meta.as_ref(), headers, session))
                .map_err(|e| (INTERNAL_ERROR, e.to_string()))
        }
        "tools/call" => {
            let p: CallParams = params
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .ok_or_else(|| (INVALID_PARAMS, "Invalid request parameters".to_owned()))?;
            let caller = caller(p.meta.as_ref(), headers, session);
            raw(&tools::call(episode, p, caller).await)
        }
        "resources/list" => empty("resources"),
        "resources/templates/list" => empty("resourceTemplates"),
        "prompts/list" => empty("prompts"),
        _ => Err((METHOD_NOT_FOUND, "Method not found".to_owned())),
    }
}
