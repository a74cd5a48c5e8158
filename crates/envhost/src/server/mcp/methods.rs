//! The MCP methods a served episode answers (protocol.md#methods): `initialize`, `ping`,
//! `logging/setLevel`, `tools/list`, `tools/call`, and the resources, prompts and completions
//! the environment serves (empty lists when it serves none).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::HeaderMap;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};

use envhost_protocol::role::{ROLE_HEADER, mcp_caller};
use envhost_protocol::{Caller, CodedError, ToolResult};
use envhost_runtime::Peer;

use super::listing::Listing;
use super::notify::Level;
use super::result::{CallToolAnswer, call_tool_result};
use super::sessions::Session;
use super::wire::{
    INTERNAL_ERROR, INVALID_PARAMS, LATEST_VERSION, METHOD_NOT_FOUND, SUPPORTED_VERSIONS,
};
use crate::embedding::Episode;

/// JSON-RPC's code for an unknown resource (MCP's `resources/read`).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A JSON-RPC error answer: code and message.
pub type MethodError = (i64, String);

/// A method's result, serialized once, straight into the reply that carries it.
pub enum Answer {
    /// A result already encoded.
    Raw(Box<RawValue>),
    /// A `tools/call` result.
    Tool(CallToolAnswer),
}

impl Answer {
    /// About how many bytes the result encodes to (more when its text needs escapes).
    pub fn size_hint(&self) -> usize {
        match self {
            Self::Raw(raw) => raw.get().len(),
            Self::Tool(answer) => answer.size_hint(),
        }
    }
}

impl Serialize for Answer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Raw(raw) => raw.serialize(serializer),
            Self::Tool(answer) => answer.serialize(serializer),
        }
    }
}

/// A tool call's answer, to come.
pub type Called<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// An MCP request's result beyond tools, to come: the result object, or a coded error.
pub type Answered<'a> =
    Pin<Box<dyn Future<Output = Result<Box<RawValue>, CodedError>> + Send + 'a>>;

/// What a served episode answers over MCP: an environment's episode, or a computer.
pub trait Tools: Send + Sync {
    /// The `initialize` result, but for its `protocolVersion`.
    fn initialize_result(&self) -> Map<String, Value>;

    /// The `tools/list` result for `caller`: the tools the caller may use.
    ///
    /// # Errors
    /// serde_json's, should the list not encode.
    fn list(&self, caller: &Caller) -> serde_json::Result<Box<RawValue>>;

    /// The name log records are sent under (the environment's).
    fn name(&self) -> &str;

    /// Calls tool `name` with `arguments` for `caller`; progress and log records meanwhile go
    /// to `peer`, when there is one.
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        caller: Caller,
        peer: Option<Arc<dyn Peer>>,
    ) -> Called<'a>;

    /// Answers `method`, an MCP request beyond tools (protocol.md#resources-and-prompts), with
    /// `params`; by default `method_not_found`, as for an environment that serves none.
    fn request<'a>(&'a self, method: &'a str, params: Map<String, Value>) -> Answered<'a> {
        let _ = params;
        Box::pin(async move {
            Err(CodedError::new(
                "method_not_found",
                format!("{method} is not served"),
            ))
        })
    }
}

/// An environment's episode as MCP serves it, with its environment's listing.
pub struct EpisodeTools<'a> {
    /// The episode.
    pub episode: &'a Episode,
    /// Its environment's listing.
    pub listing: &'a Listing,
}

impl Tools for EpisodeTools<'_> {
    fn initialize_result(&self) -> Map<String, Value> {
        self.listing.initialize_result.clone()
    }

    fn list(&self, caller: &Caller) -> serde_json::Result<Box<RawValue>> {
        self.listing.tools(self.episode, caller)
    }

    fn name(&self) -> &str {
        &self.episode.catalog().name
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        caller: Caller,
        peer: Option<Arc<dyn Peer>>,
    ) -> Called<'a> {
        Box::pin(self.episode.call_tool_with(name, arguments, caller, peer))
    }

    fn request<'a>(&'a self, method: &'a str, params: Map<String, Value>) -> Answered<'a> {
        Box::pin(async move { self.episode.call_mcp(method, &params).await })
    }
}

#[derive(Deserialize, Default)]
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

/// The params of `tools/call`.
#[derive(Deserialize)]
struct CallParams {
    /// The tool's name.
    name: String,
    /// The arguments; missing means `{}`.
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    /// The request's `_meta` (roles and sessions a gateway stamped, protocol.md#callers).
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

/// The params of `logging/setLevel`.
#[derive(Deserialize)]
struct SetLevelParams {
    level: Level,
}

#[derive(Deserialize, Default)]
struct InitializeParams {
    #[serde(rename = "protocolVersion", default)]
    protocol_version: Option<String>,
    #[serde(default)]
    capabilities: Option<Map<String, Value>>,
}

fn params<T: DeserializeOwned + Default>(params: Option<&RawValue>) -> Result<T, MethodError> {
    match params {
        None => Ok(T::default()),
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|_| (INVALID_PARAMS, "Invalid request parameters".to_owned())),
    }
}

fn raw(value: &impl Serialize) -> Result<Answer, MethodError> {
    to_raw_value(value)
        .map(Answer::Raw)
        .map_err(|e| (INTERNAL_ERROR, e.to_string()))
}

/// The caller of a request of `session` (protocol.md#callers).
fn caller(meta: Option<&Map<String, Value>>, headers: &HeaderMap, session: &str) -> Caller {
    let role = headers.get(ROLE_HEADER).and_then(|v| v.to_str().ok());
    mcp_caller(meta, role, Some(session))
}

/// `initialize`: the client's protocol version when served, else the latest; the client's
/// capabilities are kept with its session.
fn initialize(
    tools: &dyn Tools,
    params: Option<&RawValue>,
    session: &Session,
) -> Result<Answer, MethodError> {
    let asked: InitializeParams = self::params(params)?;
    session.set_client_capabilities(asked.capabilities.unwrap_or_default());
    let version = asked
        .protocol_version
        .filter(|v| SUPPORTED_VERSIONS.contains(&v.as_str()))
        .unwrap_or_else(|| LATEST_VERSION.to_owned());
    let mut result = tools.initialize_result();
    result.insert("protocolVersion".into(), Value::String(version));
    raw(&result)
}

/// Answers request `method` of `session` to `tools`; the error is a JSON-RPC error of the
/// request. A tool call's progress and log records go to `peer`, when there is one.
pub async fn handle(
    tools: &dyn Tools,
    method: &str,
    params: Option<&RawValue>,
    headers: &HeaderMap,
    session: &Session,
    peer: Option<Arc<dyn Peer>>,
) -> Result<Answer, MethodError> {
    match method {
        "initialize" => initialize(tools, params, session),
        "ping" => raw(&serde_json::json!({})),
        "logging/setLevel" => {
            let p: SetLevelParams = params
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .ok_or_else(|| (INVALID_PARAMS, "Invalid request parameters".to_owned()))?;
            session.set_log_level(p.level);
            raw(&serde_json::json!({}))
        }
        "tools/list" => {
            let p: MetaOnly = self::params(params)?;
            tools
                .list(&caller(p.meta.as_ref(), headers, &session.id))
                .map(Answer::Raw)
                .map_err(|e| (INTERNAL_ERROR, e.to_string()))
        }
        "tools/call" => {
            let p: CallParams = params
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .ok_or_else(|| (INVALID_PARAMS, "Invalid request parameters".to_owned()))?;
            let caller = caller(p.meta.as_ref(), headers, &session.id);
            let arguments = p.arguments.unwrap_or_default();
            let result = tools.call(&p.name, arguments, caller, peer).await;
            Ok(Answer::Tool(call_tool_result(result)))
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            let p: UriParams = params
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .ok_or_else(|| (INVALID_PARAMS, "Invalid request parameters".to_owned()))?;
            let _ = p.uri;
            raw(&serde_json::json!({}))
        }
        method if crate::embedding::MCP_METHODS.contains(&method) => {
            let mut params: Map<String, Value> = self::params(params)?;
            params.remove("_meta");
            params.remove("cursor");
            match tools.request(method, params).await {
                Ok(result) => Ok(Answer::Raw(result)),
                Err(error) => not_served(method, error),
            }
        }
        _ => Err((METHOD_NOT_FOUND, "Method not found".to_owned())),
    }
}

/// The params of `resources/subscribe` and `resources/unsubscribe`.
#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

/// The answer to `method` when the environment answered `error`: an empty list when it serves
/// none of the list methods, else a JSON-RPC error with MCP's code for the error's
/// (protocol.md#resources-and-prompts).
fn not_served(method: &str, error: CodedError) -> Result<Answer, MethodError> {
    let empty = |key: &str| raw(&serde_json::json!({ key: [] }));
    match (error.code.as_str(), method) {
        ("method_not_found", "resources/list") => empty("resources"),
        ("method_not_found", "resources/templates/list") => empty("resourceTemplates"),
        ("method_not_found", "prompts/list") => empty("prompts"),
        ("method_not_found", _) => Err((METHOD_NOT_FOUND, "Method not found".to_owned())),
        ("resource_not_found", _) => Err((RESOURCE_NOT_FOUND, error.message)),
        ("invalid_params", _) => Err((INVALID_PARAMS, error.message)),
        _ => Err((INTERNAL_ERROR, error.to_text())),
    }
}
