//! The [`Environment`] trait that `#[environment]` implements, and the glue that exports it as
//! the component's `environment` interface.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ToolResult;
use crate::error::EnvError;
use crate::part::Part;
use crate::{EnvInfo, ExtensionInfo, ExtensionLayout, ExtensionMethod, ToolAnnotations, ToolInfo};

/// An environment: what `#[environment]` implements for the struct it is given. Implement it by
/// hand only to do without the macro.
///
/// One value of the type lives for the whole episode, created with `Default`; the host calls one
/// method at a time.
pub trait Environment: Default + 'static {
    /// Everything the host needs to serve the environment (called once per component).
    fn describe() -> EnvInfo;

    /// `data/reset`.
    ///
    /// # Errors
    /// Any [`EnvError`] fails the call with JSON-RPC -32000 `reset_failed`.
    fn reset(&mut self) -> Result<(), EnvError> {
        Err(not_served("data/reset"))
    }

    /// `data/add`: load all of `parts` or none.
    ///
    /// # Errors
    /// Any [`EnvError`] fails the call with JSON-RPC -32000 `add_failed`.
    fn add_data(&mut self, parts: Vec<Part>) -> Result<(), EnvError> {
        let _ = parts;
        Err(not_served("data/add"))
    }

    /// `data/get`.
    ///
    /// # Errors
    /// Any [`EnvError`] fails the call with JSON-RPC -32000 `get_failed`.
    fn get_data(&mut self) -> Result<Vec<Part>, EnvError> {
        Err(not_served("data/get"))
    }

    /// Calls the tool declared as `name` with `arguments` (a JSON object, as text).
    ///
    /// # Errors
    /// The tool's [`EnvError`], or `invalid_params` when the arguments do not fit its parameters.
    fn call_tool(&mut self, name: &str, arguments: &str) -> Result<ToolResult, EnvError>;

    /// Calls method `op` of extension `uri` with `request` (a JSON object, as text); answers JSON
    /// text.
    ///
    /// # Errors
    /// The method's [`EnvError`], or `invalid_params` when the request does not fit.
    fn call_extension(&mut self, uri: &str, op: &str, request: &str) -> Result<String, EnvError> {
        let _ = request;
        Err(EnvError::new("not_found", format!("no extension method {uri} {op}")).status(404))
    }

    /// Answers MCP request `method` (`resources/list`, `resources/read`, `prompts/get`, ...)
    /// with `params` (a JSON object, as text): the method's result object as JSON text. By
    /// default `method_not_found`: the environment serves no resources, prompts or completions.
    ///
    /// # Errors
    /// `resource_not_found` for an unknown resource, `invalid_params` for an unknown prompt or
    /// argument, `method_not_found` for a method not served.
    fn call_mcp(&mut self, method: &str, params: &str) -> Result<String, EnvError> {
        let _ = params;
        Err(EnvError::new(
            "method_not_found",
            format!("{method} is not served"),
        ))
    }
}

/// Calls an environment's `#[mcp]` handler: `params` parsed, the answer printed.
///
/// # Errors
/// `invalid_params` for params that are not JSON, `invalid_result` for an answer that does not
/// print; the handler's own.
pub fn mcp_request(
    params: &str,
    handler: impl FnOnce(Value) -> Result<Value, EnvError>,
) -> Result<String, EnvError> {
    let params = serde_json::from_str(params)
        .map_err(|e| EnvError::new("invalid_params", format!("params are not JSON: {e}")))?;
    let answer = handler(params)?;
    serde_json::to_string(&answer)
        .map_err(|e| EnvError::new("invalid_result", format!("the answer does not print: {e}")))
}

fn not_served(operation: &str) -> EnvError {
    EnvError::new("not_served", format!("{operation} is not served"))
}

/// Deserializes a tool's arguments or an extension's request.
///
/// # Errors
/// `invalid_params` with serde's message.
pub fn parse_request<T: DeserializeOwned>(json: &str) -> Result<T, EnvError> {
    serde_json::from_str(json).map_err(|e| EnvError::new("invalid_params", e.to_string()))
}

/// One `#[tool]`, as the macro declares it.
pub struct ToolSpec {
    /// The declared name (may contain `{environment_name}`).
    pub name: &'static str,
    /// The description (doc comment or `description = ...`).
    pub description: Option<&'static str>,
    /// The input schema.
    pub input_schema: Value,
    /// The output schema.
    pub output_schema: Option<Value>,
    /// MCP annotations.
    pub annotations: Option<ToolAnnotations>,
    /// The `_meta` object as JSON text.
    pub meta: Option<&'static str>,
    /// Hidden until a tool-access rule names it.
    pub hidden_by_default: bool,
}

/// The [`ToolInfo`] of a tool spec.
pub fn tool_info(spec: ToolSpec) -> ToolInfo {
    ToolInfo {
        name: spec.name.into(),
        description: spec.description.map(Into::into),
        input_schema: spec.input_schema.to_string(),
        output_schema: spec.output_schema.map(|s| s.to_string()),
        annotations: spec.annotations,
        meta: spec.meta.map(Into::into),
        hidden_by_default: spec.hidden_by_default,
    }
}

/// One `#[extension]` method, as the macro declares it.
pub struct ExtensionSpec {
    /// The extension's URI.
    pub uri: &'static str,
    /// The extension's description (the first method that gives one wins).
    pub description: Option<&'static str>,
    /// The method's `op`; `None` for a single-method extension named after its handler.
    pub op: Option<&'static str>,
    /// The handler's name.
    pub handler: &'static str,
    /// The HTTP verb.
    pub http_method: &'static str,
    /// The request schema.
    pub request_schema: Value,
    /// A route replacing the default one.
    pub path: Option<&'static str>,
}

/// Groups extension methods by URI, in the order each URI first appears
/// (protocol.md#card-extensions).
pub fn extensions(specs: Vec<ExtensionSpec>) -> Vec<ExtensionInfo> {
    let mut out: Vec<ExtensionInfo> = Vec::new();
    for spec in specs {
        let method = ExtensionMethod {
            op: spec.op.unwrap_or(spec.handler).into(),
            http_method: spec.http_method.to_ascii_uppercase(),
            request_schema: spec.request_schema.to_string(),
            path: spec.path.map(Into::into),
        };
        match out.iter_mut().find(|e| e.uri == spec.uri) {
            Some(existing) => {
                if existing.description.is_none() {
                    existing.description = spec.description.map(Into::into);
                }
                existing.methods.push(method);
            }
            None => out.push(ExtensionInfo {
                uri: spec.uri.into(),
                description: spec.description.map(Into::into),
                params: None,
                required: None,
                layout: if spec.op.is_some() {
                    ExtensionLayout::PerMethod
                } else {
                    ExtensionLayout::Single
                },
                methods: vec![method],
            }),
        }
    }
    out
}

/// Exports `$ty`, an [`Environment`], as the component's `environment` interface. Used by the
/// `#[environment]` expansion.
#[doc(hidden)]
#[macro_export]
macro_rules! __export {
    ($ty:ty) => {
        const _: () = {
            use $crate::bindings::agentenv::environment::types as __wit;
            use $crate::bindings::exports::agentenv::environment::env as __exports;

            ::std::thread_local! {
                static STATE: ::std::cell::RefCell<$ty> =
                    ::std::cell::RefCell::new(<$ty as ::std::default::Default>::default());
            }

            fn with<R>(f: impl FnOnce(&mut $ty) -> R) -> R {
                STATE.with_borrow_mut(f)
            }

            struct Export;

            impl __exports::Guest for Export {
                fn describe() -> __exports::EnvInfo {
                    <$ty as $crate::Environment>::describe()
                }
                fn reset() -> Result<(), __wit::EnvError> {
                    with(|e| $crate::Environment::reset(e)).map_err(Into::into)
                }
                fn add_data(parts: Vec<__wit::Part>) -> Result<(), __wit::EnvError> {
                    let parts = parts.into_iter().map(Into::into).collect();
                    with(|e| $crate::Environment::add_data(e, parts)).map_err(Into::into)
                }
                fn get_data() -> Result<Vec<__wit::Part>, __wit::EnvError> {
                    with(|e| $crate::Environment::get_data(e))
                        .map(|parts| parts.into_iter().map(Into::into).collect())
                        .map_err(Into::into)
                }
                fn call_tool(
                    name: String,
                    arguments: String,
                ) -> Result<__exports::ToolResult, __wit::EnvError> {
                    with(|e| $crate::Environment::call_tool(e, &name, &arguments))
                        .map_err(Into::into)
                }
                fn call_extension(
                    uri: String,
                    op: String,
                    request: String,
                ) -> Result<String, __wit::EnvError> {
                    with(|e| $crate::Environment::call_extension(e, &uri, &op, &request))
                        .map_err(Into::into)
                }
                fn call_mcp(method: String, params: String) -> Result<String, __wit::EnvError> {
                    with(|e| $crate::Environment::call_mcp(e, &method, &params)).map_err(Into::into)
                }
            }

    $crate::bindings::export!(Export with_types_in $crate::bindings);
        };
    };
}
