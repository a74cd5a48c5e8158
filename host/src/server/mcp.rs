//! `/mcp`: the episode's tools over MCP streamable HTTP (§5), served by rmcp.
//!
//! Sessions are rmcp's (stateful, SSE answers, 404 for an unknown session id, 400 for a missing
//! one); requests within one session run concurrently. Roles and sessions come from `_meta` and
//! the headers (§6); tool access filters `tools/list` and refuses `tools/call` (§7.4).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::mount::Mount;
use crate::protocol::error::{CodedError, PERMISSION_DENIED};
use crate::protocol::role::{self, Caller, ROLE_HEADER};
use crate::runtime::CallContext;
use crate::runtime::bindings::{ContentBlock as GuestBlock, ToolResult};

/// How long an MCP session may sit idle before it is forgotten (the reference's 30 minutes).
const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// The MCP service of one episode, to mount at `/mcp`. `max_body_bytes` caps a request body
/// (413 beyond it).
pub fn service(
    mount: Arc<Mount>,
    max_body_bytes: usize,
) -> StreamableHttpService<McpHandler, LocalSessionManager> {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE);
    sessions.session_config.sse_retry = None;
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_sse_retry(None)
        .with_max_request_body_bytes(max_body_bytes);
    StreamableHttpService::new(
        move || {
            Ok(McpHandler {
                mount: mount.clone(),
            })
        },
        Arc::new(sessions),
        config,
    )
}

/// The MCP handler of one session.
#[derive(Clone)]
pub struct McpHandler {
    mount: Arc<Mount>,
}

/// The caller of an MCP request: its `_meta`, its `AgentEnv-Role` header, its session id (§6).
fn caller(ctx: &RequestContext<RoleServer>) -> Caller {
    let parts = ctx.extensions.get::<http::request::Parts>();
    let header = |name| {
        parts
            .and_then(|p| p.headers.get(name))
            .and_then(|v| v.to_str().ok())
    };
    role::mcp_caller(
        Some(&ctx.meta.0.0),
        header(ROLE_HEADER),
        header("mcp-session-id"),
    )
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

impl McpHandler {
    async fn call(&self, request: CallToolRequestParams, caller: Caller) -> CallToolResult {
        let name = request.name;
        let Some(tool) = self.mount.catalog.tool(&name) else {
            return text_error(format!("Unknown tool: {name}"));
        };
        if self.mount.is_disabled(&caller, tool) {
            let mut refusal = CodedError::new(
                PERMISSION_DENIED,
                format!("Tool '{name}' is disabled for role '{}'", caller.role_key()),
            );
            refusal.status = 403;
            return coded_error(&refusal);
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        if let Some(errors) = validation_errors(&tool.validator, &arguments) {
            return text_error(format!("Error executing tool {name}: {errors}"));
        }
        let arguments = arguments.to_string();
        let context = CallContext::new(caller, name.into_owned(), arguments.clone());
        match self
            .mount
            .episode
            .call_tool(&tool.tool.declared_name, arguments, context)
            .await
        {
            Ok(result) => mcp_result(result),
            Err(e) => coded_error(&e.to_coded()),
        }
    }
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        self.mount.catalog.server_info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = caller(&ctx);
        let tools = self
            .mount
            .catalog
            .tools
            .iter()
            .filter(|t| !self.mount.is_disabled(&caller, t))
            .map(|t| t.listed.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = caller(&ctx);
        Ok(self.call(request, caller).await.into())
    }
}
