//! `tools/list` and `tools/call` (§5.3, §5.4), with roles and tool access (§6, §7.4).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::error::{CodedError, PERMISSION_DENIED};
use crate::protocol::role::Caller;
use crate::runtime::CallContext;
use crate::runtime::bindings::{ContentBlock as GuestBlock, ToolResult};
use crate::server::mount::Mount;

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

/// The `tools/list` result: the tools `caller` may use, in card order.
pub fn list(mount: &Mount, caller: &Caller) -> Box<RawValue> {
    let tools = mount
        .catalog
        .tools
        .iter()
        .filter(|t| !mount.is_disabled(caller, t))
        .map(|t| &*t.listed)
        .collect();
    serde_json::value::to_raw_value(&ToolList { tools })
        .unwrap_or_else(|_| RawValue::from_string("{\"tools\":[]}".into()).unwrap_or_default())
}

/// An `isError` result with one text block and no structured content.
fn text_error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A coded error as a tool result (§5.4): text `"<code>: <message>"`, the error object as
/// structured content.
fn coded_error(error: &CodedError) -> CallToolResult {
    let mut result = text_error(error.to_text());
    result.structured_content = Some(Value::Object(error.to_object()));
    result
}

/// A guest's tool result as MCP's.
fn mcp_result(result: ToolResult) -> CallToolResult {
    let structured = match result
        .structured_content
        .as_deref()
        .map(serde_json::from_str)
    {
        None => None,
        Some(Ok(value)) => Some(value),
        Some(Err(e)) => {
            return coded_error(&CodedError::new(
                "invalid_result",
                format!("the environment answered structured content that is not JSON: {e}"),
            ));
        }
    };
    let content = result
        .content
        .into_iter()
        .map(|block| match block {
            GuestBlock::Text(text) => ContentBlock::text(text),
            GuestBlock::Image(image) => {
                ContentBlock::image(BASE64.encode(image.data), image.mime_type)
            }
        })
        .collect();
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = structured;
    out
}

/// The validation errors of `arguments`, one line each with its location.
fn validation_errors(validator: &jsonschema::Validator, arguments: &Value) -> Option<String> {
    let errors: Vec<String> = validator
        .iter_errors(arguments)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "(arguments)".into()
            } else {
                path
            };
            format!("{path}: {e}")
        })
        .collect();
    (!errors.is_empty()).then(|| {
        format!(
            "{} validation error{}:\n{}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            errors.join("\n")
        )
    })
}

/// Runs `tools/call` for `caller`: unknown tools, refusals by tool access, and arguments that
/// fail the input schema are `isError` results; everything else is the guest's answer. The
/// result has no `resultType` (a 2026 field; the versions served predate it).
pub async fn call(mount: &Mount, params: CallParams, caller: Caller) -> CallToolResult {
    let mut result = answer(mount, params, caller).await;
    result.result_type = None;
    result
}

async fn answer(mount: &Mount, params: CallParams, caller: Caller) -> CallToolResult {
    let name = params.name;
    let Some(tool) = mount.catalog.tool(&name) else {
        return text_error(format!("Unknown tool: {name}"));
    };
    if mount.is_disabled(&caller, tool) {
        let mut refusal = CodedError::new(
            PERMISSION_DENIED,
            format!("Tool '{name}' is disabled for role '{}'", caller.role_key()),
        );
        refusal.status = 403;
        return coded_error(&refusal);
    }
    let arguments = Value::Object(params.arguments.unwrap_or_default());
    if let Some(errors) = validation_errors(&tool.validator, &arguments) {
        return text_error(format!("Error executing tool {name}: {errors}"));
    }
    let arguments = arguments.to_string();
    let context = CallContext::new(caller, name, arguments.clone());
    match mount
        .episode
        .call_tool(&tool.tool.declared_name, arguments, context)
        .await
    {
        Ok(result) => mcp_result(result),
        Err(e) => coded_error(&e.to_coded()),
    }
}
