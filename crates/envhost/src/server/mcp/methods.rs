//! The MCP methods a served episode answers (protocol.md#methods): `initialize`, `ping`,
//! `tools/list`, `tools/call`, and empty resource and prompt lists.

use std::future::Future;
use std::pin::Pin;

use http::HeaderMap;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};

use envhost_protocol::role::{ROLE_HEADER, mcp_caller};
use envhost_protocol::{Caller, ToolResult};

use super::listing::Listing;
use super::result::{CallToolAnswer, call_tool_result};
use super::wire::{
    INTERNAL_ERROR, INVALID_PARAMS, LATEST_VERSION, METHOD_NOT_FOUND, SUPPORTED_VERSIONS,
};
use crate::embedding::Episode;

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

/// What a served episode answers over MCP: an environment's episode, or a computer.
pub trait Tools: Send + Sync {
    /// The `initialize` result, but for its `protocolVersion`.
    fn initialize_result(&self) -> Map<String, Value>;

    /// The `tools/list` result for `caller`: the tools the caller may use.
    ///
    /// # Errors
    /// serde_json's, should the list not encode.
    fn list(&self, caller: &Caller) -> serde_json::Result<Box<RawValue>>;

    /// Calls tool `name` with `arguments` for `caller`.
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        caller: Caller,
    ) -> Called<'a>;
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

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        caller: Caller,
    ) -> Called<'a> {
        Box::pin(self.episode.call_tool(name, arguments, caller))
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

/// `initialize`: the client's protocol version when served, else the latest.
fn initialize(tools: &dyn Tools, params: Option<&RawValue>) -> Result<Answer, MethodError> {
    let asked: InitializeParams = self::params(params)?;
    let version = asked
        .protocol_version
        .filter(|v| SUPPORTED_VERSIONS.contains(&v.as_str()))
        .unwrap_or_else(|| LATEST_VERSION.to_owned());
    let mut result = tools.initialize_result();
    result.insert("protocolVersion".into(), Value::String(version));
    raw(&result)
}

/// Answers request `method` of `session` to `tools`; the error is a JSON-RPC error of the
/// request.
pub async fn handle(
    tools: &dyn Tools,
    method: &str,
    params: Option<&RawValue>,
    headers: &HeaderMap,
    session: &str,
) -> Result<Answer, MethodError> {
    let empty = |key: &str| raw(&serde_json::json!({ key: [] }));
    match method {
        "initialize" => initialize(tools, params),
        "ping" => raw(&serde_json::json!({})),
        "tools/list" => {
            let p: MetaOnly = self::params(params)?;
            tools
                .list(&caller(p.meta.as_ref(), headers, session))
                .map(Answer::Raw)
                .map_err(|e| (INTERNAL_ERROR, e.to_string()))
        }
        "tools/call" => {
            let p: CallParams = params
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .ok_or_else(|| (INVALID_PARAMS, "Invalid request parameters".to_owned()))?;
            let caller = caller(p.meta.as_ref(), headers, session);
            let arguments = p.arguments.unwrap_or_default();
            let result = tools.call(&p.name, arguments, caller).await;
            Ok(Answer::Tool(call_tool_result(result)))
        }
        "resources/list" => empty("resources"),
        "resources/templates/list" => empty("resourceTemplates"),
        "prompts/list" => empty("prompts"),
        _ => Err((METHOD_NOT_FOUND, "Method not found".to_owned())),
    }
}
