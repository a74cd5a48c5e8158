//! An environment as served: the compiled environment and what is precomputed for it once, for
//! all its episodes: the encoded card, each tool's encoded MCP listing and argument validator, the
//! MCP `initialize` result, and the extension route table.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use rmcp::model::{
    Implementation, PromptsCapability, ResourcesCapability, ServerCapabilities, ServerConfig,
    Tool as McpTool, ToolAnnotations, ToolsCapability,
};

use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};

use crate::protocol::card::card;
use crate::protocol::description::{Description, ExtensionMethod, Tool};
use crate::protocol::json::to_python_json;
use crate::runtime::Environment;

/// A tool as served: its description, its MCP listing and its argument validator.
pub struct ServedTool {
    /// The tool.
    pub tool: Tool,
    /// Its `tools/list` entry, encoded.
    pub listed: Box<RawValue>,
    /// Validates a call's arguments against the input schema.
    pub validator: jsonschema::Validator,
}

/// An extension method as routed.
pub struct Route {
    /// The extension's URI.
    pub uri: String,
    /// The method.
    pub method: ExtensionMethod,
}

/// Everything served the same way by every episode of one environment.
pub struct Catalog {
    /// The environment's name in the host (`slack` in `envhost serve slack=slack.wasm`).
    pub name: String,
    /// The compiled environment.
    pub environment: Arc<Environment>,
    /// How long an episode may go without a call before it is evicted; `None` keeps it.
    pub idle_timeout: Option<Duration>,
    /// The resolved description.
    pub description: Description,
    /// The card, encoded as the reference encodes it.
    pub card: Bytes,
    /// The tools, in card order.
    pub tools: Vec<ServedTool>,
    tool_index: HashMap<String, usize>,
    /// Extension routes by path, then verb.
    routes: HashMap<String, Vec<Route>>,
    /// The MCP `initialize` result, but for its `protocolVersion`.
    pub initialize_result: Map<String, Value>,
}

/// Why a catalog cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("tool {tool}: its input schema is not a valid JSON Schema: {detail}")]
pub struct CatalogError {
    /// The tool.
    pub tool: String,
    /// What is wrong.
    pub detail: String,
}

fn listed(tool: &Tool) -> McpTool {
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

/// The capabilities the reference announces (§5.1): tools, and empty prompt and resource lists,
/// none of which change.
fn capabilities() -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::default();
    capabilities.experimental = Some(Default::default());
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

impl Catalog {
    /// Precomputes what `environment` serves, under `name`.
    ///
    /// # Errors
    /// [`CatalogError`] when a tool's input schema does not compile.
    pub fn new(
        name: String,
        environment: Arc<Environment>,
        idle_timeout: Option<Duration>,
    ) -> Result<Self, CatalogError> {
        let description = environment.description().clone();
        let tools = description
            .tools
            .iter()
            .map(|tool| {
                let validator = jsonschema::validator_for(&serde_json::Value::Object(
                    tool.input_schema.clone(),
                ))
                .map_err(|e| CatalogError {
                    tool: tool.name.clone(),
                    detail: e.to_string(),
                })?;
                let listed = to_raw_value(&listed(tool)).map_err(|e| CatalogError {
                    tool: tool.name.clone(),
                    detail: e.to_string(),
                })?;
                Ok(ServedTool {
                    tool: tool.clone(),
                    listed,
                    validator,
                })
            })
            .collect::<Result<Vec<_>, CatalogError>>()?;
        let tool_index = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tool.name.clone(), i))
            .collect();
        let mut routes: HashMap<String, Vec<Route>> = HashMap::new();
        for ext in &description.extensions {
            for method in &ext.methods {
                routes.entry(method.path.clone()).or_default().push(Route {
                    uri: ext.uri.clone(),
                    method: method.clone(),
                });
            }
        }
        let server_info = ServerConfig::new(capabilities()).with_server_info(Implementation::new(
            description.name.clone(),
            env!("CARGO_PKG_VERSION"),
        ));
        let initialize_result = match serde_json::to_value(&server_info) {
            Ok(Value::Object(result)) => result,
            _ => Map::new(),
        };
        Ok(Self {
            name,
            environment,
            idle_timeout,
            card: Bytes::from(to_python_json(&card(&description))),
            description,
            tools,
            tool_index,
            routes,
            initialize_result,
        })
    }

    /// The tool served as `name`.
    pub fn tool(&self, name: &str) -> Option<&ServedTool> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    /// The extension routes at `path`: none when the path is not an extension's.
    pub fn routes(&self, path: &str) -> &[Route] {
        self.routes.get(path).map_or(&[], Vec::as_slice)
    }

    /// The route at `path` for `verb` (GET routes answer HEAD too).
    pub fn route(&self, path: &str, verb: &Method) -> Option<&Route> {
        self.routes(path).iter().find(|r| {
            r.method.http_method == verb
                || (verb == Method::HEAD && r.method.http_method == Method::GET)
        })
    }
}
