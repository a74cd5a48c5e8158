//! An environment as served: the compiled environment and what is precomputed for it once, for
//! all its episodes: the encoded card, each tool's argument validator, and the extension route
//! table.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Method;

use envhost_protocol::arguments::ArgumentTypes;
use envhost_protocol::card::card;
use envhost_protocol::description::{Description, ExtensionMethod, Tool};
use envhost_protocol::json::to_python_json;
use envhost_runtime::Environment;

/// A tool as served: its description and its argument and result validators.
pub struct ServedTool {
    /// The tool.
    pub tool: Tool,
    /// The input schema's types, to which a call's arguments are brought before they are
    /// validated (protocol.md#tool-arguments).
    pub argument_types: ArgumentTypes,
    /// Validates a call's arguments against the input schema.
    pub validator: jsonschema::Validator,
    /// Validates a result's structured content against the output schema, when the tool has
    /// one (protocol.md#tool-results).
    pub output_validator: Option<jsonschema::Validator>,
    /// The input schema as JSON text, as an agent's model is given it.
    pub schema_json: String,
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
                let compile = |schema: &envhost_protocol::description::Object| {
                    jsonschema::validator_for(&serde_json::Value::Object(schema.clone())).map_err(
                        |e| CatalogError {
                            tool: tool.name.clone(),
                            detail: e.to_string(),
                        },
                    )
                };
                let validator = compile(&tool.input_schema)?;
                let output_validator = tool.output_schema.as_ref().map(compile).transpose()?;
                Ok(ServedTool {
                    tool: tool.clone(),
                    argument_types: ArgumentTypes::new(&tool.input_schema),
                    validator,
                    output_validator,
                    schema_json: serde_json::to_string(&tool.input_schema)
                        .unwrap_or_else(|_| "{}".into()),
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
        Ok(Self {
            name,
            environment,
            idle_timeout,
            card: Bytes::from(to_python_json(&card(&description))),
            description,
            tools,
            tool_index,
            routes,
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

    /// The route of extension `uri`'s method `op` (its name under the card's `params.methods`).
    pub fn extension_route(&self, uri: &str, op: &str) -> Option<&Route> {
        self.routes
            .values()
            .flatten()
            .find(|r| r.uri == uri && r.method.op == op)
    }

    /// The route at `path` for `verb` (GET routes answer HEAD too).
    pub fn route(&self, path: &str, verb: &Method) -> Option<&Route> {
        self.routes(path).iter().find(|r| {
            r.method.http_method == verb
                || (verb == Method::HEAD && r.method.http_method == Method::GET)
        })
    }
}
