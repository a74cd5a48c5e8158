//! `tools/list` and `tools/call` (§5.3, §5.4) on the wire.

use rmcp::model::CallToolResult;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::host::Episode;
use crate::protocol::role::Caller;

/// The params of `tools/call`.
#[derive(Deserialize)]
pub struct CallParams {
    /// The tool's name.
    pub name: String,
    /// The arguments; missing means `{}`.
    #[serde(default)]
    pub arguments: Option<Map<String, Value>>,
    /// The request's `_meta` (roles and sessions a gateway stamped, §6).
    #[serde(rename = "_meta", default)]
    pub meta: Option<Map<String, Value>>,
}

#[derive(Serialize)]
struct ToolList<'a> {
    tools: Vec<&'a RawValue>,
}

/// The `tools/list` result: the tools `caller` may use, in card order, each as encoded once for
/// the environment.
pub fn list(episode: &Episode, caller: &Caller) -> serde_json::Result<Box<RawValue>> {
    let tools = episode
        .tools(caller)
        .into_iter()
        .map(|t| &*t.listed)
        .collect();
    serde_json::value::to_raw_value(&ToolList { tools })
}

/// Runs `tools/call` for `caller`.
pub async fn call(episode: &Episode, params: CallParams, caller: Caller) -> CallToolResult {
    let arguments = params.arguments.unwrap_or_default();
    episode.call_tool(&params.name, arguments, caller).await
}
