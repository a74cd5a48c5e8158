//! A computer's own routes, as the reference serves a computer driver (computer.md#serving):
//! the card, MCP at `/mcp`, the data plane at `/agentenv`, the `computer-ready`,
//! `computer-display`, `computer-spaces`, `computer-keyboard` and `computer-exec` extensions,
//! and tool access. Each is the HTTP edge of a [`ComputerEpisode`] operation.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::Response;
use axum::routing::{MethodRouter, any};
use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value, json};

use envhost_protocol::Caller;
use envhost_protocol::card::{MCP_PATH, RPC_PATH, WELL_KNOWN_PATH};
use envhost_protocol::description::Operation;
use envhost_protocol::error::{CodedError, INVALID_PARAMS};
use envhost_protocol::jsonrpc::{self, RpcError};
use envhost_protocol::tool_access::Change;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig, ToolsCapability};

use super::current::{CurrentComputer, method_not_allowed};
use super::{Computers, Shared};
use crate::computer::data;
use crate::computer::extensions::{self, DISPLAY, KEYBOARD, READY, SPACES};
use crate::embedding::{ComputerEpisode, DataError};
use crate::server::mcp::methods::{Called, Tools};
use crate::server::mcp::sessions::Sessions;
use crate::server::mcp::transport::{self, McpEndpoint};
use crate::server::reply;
use envhost_runtime::Peer;

/// Which optional routes a computer serves.
#[derive(Clone, Copy)]
pub struct Optional {
    /// `computer-exec/v1`: commands are granted.
    exec: bool,
    /// `computer-display/set`: the driver has display modes.
    display_set: bool,
    /// `computer-keyboard`: the driver has the keyboard group.
    keyboard: bool,
}

impl Optional {
    /// Every optional route.
    pub const ALL: Self = Self {
        exec: true,
        display_set: true,
        keyboard: true,
    };

    /// The optional routes of `computer`'s driver.
    pub fn of(computer: &ComputerEpisode) -> Self {
        let shape = computer.catalog().shape();
        Self {
            exec: computer.has_exec(),
            display_set: !shape.modes.is_empty(),
            keyboard: shape.keyboard,
        }
    }
}

/// A route answering `methods` with their handlers, chained on the result; any other verb
/// answers 405 with `Allow: allow` once the computer is found.
fn only(allow: &'static str) -> MethodRouter<Shared> {
    any(move |_: CurrentComputer| async move { method_not_allowed(allow) })
}

/// Every route of a computer with `optional`'s: its path, the verbs it answers and its
/// handlers.
pub fn mounts(optional: Optional) -> Vec<(&'static str, &'static [Method], MethodRouter<Shared>)> {
    let mcp = any(mcp_other)
        .post(mcp_post)
        .get(mcp_get)
        .delete(mcp_delete);
    let (get_only, post_only): (&[Method], &[Method]) = (&[Method::GET], &[Method::POST]);
    let get = || only("GET,HEAD");
    let post = || only("POST");
    let mut mounts = vec![
        (WELL_KNOWN_PATH, get_only, get().get(card)),
        (
            MCP_PATH,
            &[Method::POST, Method::GET, Method::DELETE][..],
            mcp,
        ),
        (RPC_PATH, post_only, post().post(rpc)),
        (
            "/agentenv/ext/computer-ready/status",
            get_only,
            get().get(ready_status),
        ),
        (
            "/agentenv/ext/computer-display/get",
            get_only,
            get().get(display_get),
        ),
        (
            "/agentenv/ext/computer-spaces/get",
            get_only,
            get().get(spaces_get),
        ),
        (
            "/agentenv/ext/computer-spaces/set",
            post_only,
            post().post(spaces_set),
        ),
        ("/tools/disable", post_only, post().post(disable)),
        ("/tools/enable", post_only, post().post(enable)),
    ];
    if optional.exec {
        mounts.push((
            "/agentenv/ext/computer-exec/run",
            post_only,
            post().post(exec_run),
        ));
    }
    if optional.display_set {
        mounts.push((
            "/agentenv/ext/computer-display/set",
            post_only,
            post().post(display_set),
        ));
    }
    if optional.keyboard {
        mounts.push((
            "/agentenv/ext/computer-keyboard/get",
            get_only,
            get().get(keyboard_get),
        ));
        mounts.push((
            "/agentenv/ext/computer-keyboard/set",
            post_only,
            post().post(keyboard_set),
        ));
    }
    mounts
}

async fn card(CurrentComputer(computer): CurrentComputer) -> Response {
    reply::json(StatusCode::OK, &computer.card())
}

/// A computer over MCP: its sessions, kept by the server, and its tools.
struct Endpoint<'a> {
    computers: &'a Computers,
    computer: &'a ComputerEpisode,
}

impl McpEndpoint for Endpoint<'_> {
    fn sessions(&self) -> Option<Arc<Sessions>> {
        self.computers.sessions(self.computer)
    }

    fn sessions_or_default(&self) -> Arc<Sessions> {
        self.computers.sessions_or_default(self.computer)
    }

    fn tools(&self) -> Option<Box<dyn Tools + '_>> {
        Some(Box::new(ComputerTools(self.computer)))
    }
}

/// A computer's tools as MCP answers them.
struct ComputerTools<'a>(&'a ComputerEpisode);

impl Tools for ComputerTools<'_> {
    fn initialize_result(&self) -> Map<String, Value> {
        let mut capabilities = ServerCapabilities::default();
        capabilities.experimental = Some(Default::default());
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(false);
        capabilities.tools = Some(tools);
        let info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.0.name().to_owned(),
            env!("CARGO_PKG_VERSION"),
        ));
        match serde_json::to_value(&info) {
            Ok(Value::Object(result)) => result,
            _ => Map::new(),
        }
    }

    fn list(&self, caller: &Caller) -> serde_json::Result<Box<RawValue>> {
        to_raw_value(&json!({ "tools": self.0.list_tools(caller) }))
    }

    fn name(&self) -> &str {
        self.0.name()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        caller: Caller,
        _peer: Option<Arc<dyn Peer>>,
    ) -> Called<'a> {
        Box::pin(async move { self.0.call_tool(name, arguments, &caller).await })
    }
}

async fn mcp_post(
    State(computers): State<Shared>,
    CurrentComputer(computer): CurrentComputer,
    request: Request,
) -> Response {
    let endpoint = Endpoint {
        computers: &computers,
        computer: &computer,
    };
    transport::post(&endpoint, request).await
}

async fn mcp_get(
    State(computers): State<Shared>,
    CurrentComputer(computer): CurrentComputer,
    headers: HeaderMap,
) -> Response {
    let endpoint = Endpoint {
        computers: &computers,
        computer: &computer,
    };
    transport::get(&endpoint, &headers)
}

async fn mcp_delete(
    State(computers): State<Shared>,
    CurrentComputer(computer): CurrentComputer,
    headers: HeaderMap,
) -> Response {
    let endpoint = Endpoint {
        computers: &computers,
        computer: &computer,
    };
    transport::delete(&endpoint, &headers)
}

/// Any other verb of `/mcp`: MCP's 405, once the computer is found.
async fn mcp_other(_: CurrentComputer) -> Response {
    transport::method_not_allowed().await
}

/// `POST /agentenv`: the data plane of the operations the computer answers
/// ([`ComputerEpisode::operations`]); a failure is JSON-RPC's handler error.
async fn rpc(CurrentComputer(computer): CurrentComputer, body: Bytes) -> Response {
    let request = match jsonrpc::parse_request(&body, computer.operations()) {
        Ok(request) => request,
        Err(e) => return reply::json(StatusCode::OK, &e.to_json()),
    };
    let params = match serde_json::from_str::<Map<String, Value>>(request.params.get()) {
        Ok(params) => params,
        Err(e) => {
            return reply::json(
                StatusCode::OK,
                &RpcError::invalid_params(request.id, e.to_string()).to_json(),
            );
        }
    };
    let answer = match request.operation {
        Operation::Add => match params.get("parts") {
            Some(Value::Array(parts)) => computer.add_data(parts).await.map(|()| json!({})),
            _ => Err(DataError::Failed(data::NOT_A_LIST.into())),
        },
        _ => computer
            .get_data()
            .await
            .map(|parts| json!({ "parts": parts })),
    };
    match answer {
        Ok(result) => reply::json(StatusCode::OK, &jsonrpc::success(request.id, result)),
        Err(e) => reply::json(
            StatusCode::OK,
            &RpcError::handler_failed(request.id, request.operation, e.to_string()).to_json(),
        ),
    }
}

/// A REST body as a JSON object (an empty body is `{}`), or the reference's framework error.
fn object(body: &[u8]) -> Result<Map<String, Value>, CodedError> {
    let text = if body.is_empty() {
        b"{}".as_slice()
    } else {
        body
    };
    match serde_json::from_slice::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(CodedError::new(
            INVALID_PARAMS,
            "the body must be a JSON object",
        )),
    }
}

/// The extension method `uri` `method` of `computer`, with the request `body` when it takes one.
async fn extension(
    computer: &ComputerEpisode,
    uri: &str,
    method: &str,
    body: Option<&[u8]>,
) -> Response {
    let params = match body.map(object).transpose() {
        Ok(params) => params.unwrap_or_default(),
        Err(e) => return reply::coded(&e),
    };
    match computer.call_extension(uri, method, &params).await {
        Ok(answer) => reply::json(StatusCode::OK, &answer),
        Err(e) => reply::coded(&e),
    }
}

async fn ready_status(CurrentComputer(computer): CurrentComputer) -> Response {
    extension(&computer, READY, "status", None).await
}

async fn display_get(CurrentComputer(computer): CurrentComputer) -> Response {
    extension(&computer, DISPLAY, "get", None).await
}

async fn display_set(CurrentComputer(computer): CurrentComputer, body: Bytes) -> Response {
    extension(&computer, DISPLAY, "set", Some(&body)).await
}

async fn spaces_get(CurrentComputer(computer): CurrentComputer) -> Response {
    extension(&computer, SPACES, "get", None).await
}

async fn spaces_set(CurrentComputer(computer): CurrentComputer, body: Bytes) -> Response {
    extension(&computer, SPACES, "set", Some(&body)).await
}

async fn keyboard_get(CurrentComputer(computer): CurrentComputer) -> Response {
    extension(&computer, KEYBOARD, "get", None).await
}

async fn keyboard_set(CurrentComputer(computer): CurrentComputer, body: Bytes) -> Response {
    extension(&computer, KEYBOARD, "set", Some(&body)).await
}

async fn exec_run(CurrentComputer(computer): CurrentComputer, body: Bytes) -> Response {
    extension(&computer, extensions::EXEC, "run", Some(&body)).await
}

fn change(computer: &ComputerEpisode, body: &[u8], disabled: bool) -> Response {
    match Change::parse(body) {
        Ok(change) => reply::json(
            StatusCode::OK,
            &computer.change_tool_access(&change, disabled),
        ),
        Err(e) => reply::coded(&e),
    }
}

async fn disable(CurrentComputer(computer): CurrentComputer, body: Bytes) -> Response {
    change(&computer, &body, true)
}

async fn enable(CurrentComputer(computer): CurrentComputer, body: Bytes) -> Response {
    change(&computer, &body, false)
}
