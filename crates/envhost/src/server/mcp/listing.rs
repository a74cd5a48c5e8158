//! What MCP lists of an environment, encoded once for all its episodes: each tool's `tools/list`
//! entry (protocol.md#tool-listing) and the `initialize` result (protocol.md#methods), in rmcp's
//! model types.

use std::collections::BTreeMap;
use std::sync::Arc;

use envhost_protocol::description::Tool;
use rmcp::model::{
    Implementation, PromptsCapability, ResourcesCapability, ServerCapabilities, ServerConfig,
    Tool as McpTool, ToolAnnotations, ToolsCapability,
};
use serde::Serialize;
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};

use crate::embedding::{Catalog, Episode};
use envhost_protocol::Caller;

/// One environment's MCP listing.
pub struct Listing {
    /// The `tools/list` entries, encoded, in the catalog's (card) order.
    tools: Vec<Box<RawValue>>,
    /// The `initialize` result, but for its `protocolVersion`.
    pub(super) initialize_result: Map<String, Value>,
}

/// A tool's `tools/list` entry: its name as served, its description (`""` for none), schemas,
/// annotations with unset hints left out, and `_meta` with the hidden-by-default marker.
pub fn entry(tool: &Tool) -> McpTool {
    let mut listed = McpTool::new_with_raw(
        tool.name.clone(),
        Some(tool.description.clone().unwrap_or_default().into()),
        Arc::new(tool.input_schema.clone()),
    );
    listed.output_schema = tool.output_schema.clone().map(Arc::new);
    listed.annotations = tool.annotations.as_ref().map(|a| {
        let mut out = ToolAnnotations::new();
        out.title = a.title.clone();
        out.read_only_hint = a.read_only_hint;
        out.destructive_hint = a.destructive_hint;
        out.idempotent_hint = a.idempotent_hint;
        out.open_world_hint = a.open_world_hint;
        out
    });
    listed.meta = tool.listed_meta().map(Into::into);
    listed
}

/// The capabilities the reference announces (protocol.md#methods): tools, prompts and
/// resources, none of whose lists change; and envhost's own, completions and logging.
fn capabilities() -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::default();
    capabilities.experimental = Some(Default::default());
    capabilities.completions = Some(Default::default());
    capabilities.logging = Some(Default::default());
    let mut prompts = PromptsCapability::default();
    prompts.list_changed = Some(false);
    capabilities.prompts = Some(prompts);
    let mut resources = ResourcesCapability::default();
    resources.subscribe = Some(false);
    resources.list_changed = Some(false);
    capabilities.resources = Some(resources);
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(false);
    capabilities.tools = Some(tools);
    capabilities
}

#[derive(Serialize)]
struct ToolList<'a> {
    tools: Vec<&'a RawValue>,
}

impl Listing {
    /// The listing of `catalog`'s environment, served as `name` with envhost's version.
    ///
    /// # Errors
    /// serde_json's, should a tool's entry not encode.
    pub fn new(catalog: &Catalog) -> serde_json::Result<Self> {
        let tools = catalog
            .tools
            .iter()
            .map(|t| to_raw_value(&entry(&t.tool)))
            .collect::<serde_json::Result<_>>()?;
        let server_info = ServerConfig::new(capabilities()).with_server_info(Implementation::new(
            catalog.description.name.clone(),
            env!("CARGO_PKG_VERSION"),
        ));
        let initialize_result = match serde_json::to_value(&server_info)? {
            Value::Object(result) => result,
            _ => Map::new(),
        };
        Ok(Self {
            tools,
            initialize_result,
        })
    }

    /// The `tools/list` result of `episode` for `caller`: the tools the caller may use, in card
    /// order (protocol.md#tool-access-over-mcp), each as encoded once for the environment.
    ///
    /// # Errors
    /// serde_json's, should the list not encode.
    pub fn tools(&self, episode: &Episode, caller: &Caller) -> serde_json::Result<Box<RawValue>> {
        if let Some(changed) = episode.changed_descriptions() {
            return Self::tools_changed(episode, caller, &changed);
        }
        let tools = episode
            .catalog()
            .tools
            .iter()
            .zip(&self.tools)
            .filter(|(tool, _)| !episode.is_disabled(caller, tool))
            .map(|(_, listed)| &**listed)
            .collect();
        to_raw_value(&ToolList { tools })
    }

    /// [`Listing::tools`] of an episode whose guest changed some descriptions
    /// (protocol.md#tool-updates): every entry encoded afresh.
    fn tools_changed(
        episode: &Episode,
        caller: &Caller,
        changed: &BTreeMap<String, String>,
    ) -> serde_json::Result<Box<RawValue>> {
        let entries = episode
            .catalog()
            .tools
            .iter()
            .filter(|tool| !episode.is_disabled(caller, tool))
            .map(|served| match changed.get(&served.tool.declared_name) {
                Some(description) => to_raw_value(&entry(&Tool {
                    description: Some(description.clone()),
                    ..served.tool.clone()
                })),
                None => to_raw_value(&entry(&served.tool)),
            })
            .collect::<serde_json::Result<Vec<_>>>()?;
        to_raw_value(&ToolList {
            tools: entries.iter().map(|e| &**e).collect(),
        })
    }
}
