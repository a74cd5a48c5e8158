//! A computer served over HTTP as the reference serves a computer driver (computer.md#serving):
//! the card, MCP at `/mcp`, the data plane at `/agentenv`, the `computer-ready`,
//! `computer-display`, `computer-spaces` and `computer-keyboard` extensions, and tool access.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter, get, on, post};
use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value, json};

use envhost_protocol::card::{MCP_PATH, RPC_PATH, WELL_KNOWN_PATH};
use envhost_protocol::computer::card::{Shape, card, listing};
use envhost_protocol::computer::errors::Code;
use envhost_protocol::computer::frames::Display;
use envhost_protocol::computer::spaces::{Space, check_space};
use envhost_protocol::description::Operation;
use envhost_protocol::error::{CodedError, INVALID_PARAMS, PERMISSION_DENIED};
use envhost_protocol::jsonrpc::{self, RpcError};
use envhost_protocol::tool_access::{Change, Rules};
use envhost_protocol::{Caller, ToolResult};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig, ToolsCapability};

use super::mcp::methods::{Called, Tools};
use super::mcp::sessions::Sessions;
use super::mcp::transport::{self, McpEndpoint};
use super::reply;
use crate::computer::exec::Exec;
use crate::computer::{Computer, data, files, tools};

/// A served computer: the computer, its shape, its MCP sessions and its tool-access rules,
/// and what the operator granted it: commands, and a home for files.
pub struct Served {
    computer: Arc<Computer>,
    shape: Shape,
    sessions: Arc<Sessions>,
    rules: Mutex<Rules>,
    exec: Option<Exec>,
    home: Option<PathBuf>,
}

type Shared = Arc<Served>;

impl Served {
    /// `computer` served with the card of `shape`, running commands with `exec` when granted,
    /// writing and exporting files under `home` when granted. `shape`'s `exec` and
    /// `write_files` follow the grants.
    pub fn new(
        computer: Arc<Computer>,
        mut shape: Shape,
        exec: Option<Exec>,
        home: Option<PathBuf>,
    ) -> Self {
        shape.exec = exec.is_some();
        shape.write_files = home.is_some();
        Self {
            computer,
            shape,
            sessions: Arc::default(),
            rules: Mutex::default(),
            exec,
            home,
        }
    }

    fn rules(&self) -> std::sync::MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn disabled(&self, caller: &Caller, tool: &str) -> bool {
        self.rules().is_disabled(caller.role_key(), tool, false)
    }
}

impl McpEndpoint for Served {
    fn sessions(&self) -> Option<Arc<Sessions>> {
        Some(self.sessions.clone())
    }

    fn sessions_or_default(&self) -> Arc<Sessions> {
        self.sessions.clone()
    }

    fn tools(&self) -> Option<Box<dyn Tools + '_>> {
        Some(Box::new(ServedTools(self)))
    }
}

/// The computer's tools as MCP answers them.
struct ServedTools<'a>(&'a Served);

impl Tools for ServedTools<'_> {
    fn initialize_result(&self) -> Map<String, Value> {
        let mut capabilities = ServerCapabilities::default();
        capabilities.experimental = Some(Default::default());
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(false);
        capabilities.tools = Some(tools);
        let info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.0.shape.name.clone(),
            env!("CARGO_PKG_VERSION"),
        ));
        match serde_json::to_value(&info) {
            Ok(Value::Object(result)) => result,
            _ => Map::new(),
        }
    }

    fn list(&self, caller: &Caller) -> serde_json::Result<Box<RawValue>> {
        let settings = self.0.computer.settings();
        let tools: Vec<Value> = listing(
            &self.0.shape,
            settings.default_space,
            settings.default_norm_scale,
        )
        .into_iter()
        .filter(|t| {
            !self
                .0
                .disabled(caller, t["name"].as_str().unwrap_or_default())
        })
        .collect();
        to_raw_value(&json!({ "tools": tools }))
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        caller: Caller,
    ) -> Called<'a> {
        Box::pin(async move {
            if self.0.disabled(&caller, name) {
                let mut refused = Code::PermissionDenied.error(format!(
                    "Tool '{name}' is disabled for role '{}'",
                    caller.role_key()
                ));
                refused.code = PERMISSION_DENIED.into();
                return ToolResult::coded(refused);
            }
            tools::call(&self.0.computer, name, arguments, "default").await
        })
    }
}

/// Which optional routes a computer serves.
#[derive(Clone, Copy)]
struct Optional {
    /// `computer-exec/v1`: commands are granted.
    exec: bool,
    /// `computer-display/set`: the driver has display modes.
    display_set: bool,
    /// `computer-keyboard`: the driver has the keyboard group.
    keyboard: bool,
}

/// Every route of a computer with `optional`'s: its path, the verbs it answers and its
/// handlers.
fn mounts(optional: Optional) -> Vec<(&'static str, &'static [Method], MethodRouter<Shared>)> {
    let mcp = on(MethodFilter::POST, mcp_post)
        .on(MethodFilter::GET, mcp_get)
        .on(MethodFilter::DELETE, mcp_delete)
        .fallback(transport::method_not_allowed);
    let (get_only, post_only): (&[Method], &[Method]) = (&[Method::GET], &[Method::POST]);
    let mut mounts = vec![
        (WELL_KNOWN_PATH, get_only, get(card_route)),
        (
            MCP_PATH,
            &[Method::POST, Method::GET, Method::DELETE][..],
            mcp,
        ),
        (RPC_PATH, post_only, post(rpc)),
        (
            "/agentenv/ext/computer-ready/status",
            get_only,
            get(ready_status),
        ),
        (
            "/agentenv/ext/computer-display/get",
            get_only,
            get(display_get),
        ),
        (
            "/agentenv/ext/computer-spaces/get",
            get_only,
            get(spaces_get),
        ),
        (
            "/agentenv/ext/computer-spaces/set",
            post_only,
            post(spaces_set),
        ),
        ("/tools/disable", post_only, post(disable)),
        ("/tools/enable", post_only, post(enable)),
    ];
    if optional.exec {
        mounts.push(("/agentenv/ext/computer-exec/run", post_only, post(exec_run)));
    }
    if optional.display_set {
        mounts.push((
            "/agentenv/ext/computer-display/set",
            post_only,
            post(display_set),
        ));
    }
    if optional.keyboard {
        mounts.push((
            "/agentenv/ext/computer-keyboard/get",
            get_only,
            get(keyboard_get),
        ));
        mounts.push((
            "/agentenv/ext/computer-keyboard/set",
            post_only,
            post(keyboard_set),
        ));
    }
    mounts
}

/// Every route a computer may serve, the optional ones included, as its path and the verbs it
/// answers.
pub fn route_table() -> Vec<(&'static str, &'static [Method])> {
    let all = Optional {
        exec: true,
        display_set: true,
        keyboard: true,
    };
    mounts(all)
        .into_iter()
        .map(|(path, methods, _)| (path, methods))
        .collect()
}

/// The routes of `served`.
pub fn router(served: Served) -> Router {
    let optional = Optional {
        exec: served.exec.is_some(),
        display_set: !served.shape.modes.is_empty(),
        keyboard: served.shape.keyboard,
    };
    let router = mounts(optional)
        .into_iter()
        .fold(Router::new(), |router, (path, _, handlers)| {
            router.route(path, handlers)
        });
    router.fallback(not_found).with_state(Arc::new(served))
}

async fn card_route(State(served): State<Shared>) -> Response {
    reply::json(
        StatusCode::OK,
        &card(&served.shape, &served.computer.settings()),
    )
}

async fn mcp_post(State(served): State<Shared>, request: Request) -> Response {
    transport::post(&*served, request).await
}

async fn mcp_get(State(served): State<Shared>, headers: HeaderMap) -> Response {
    transport::get(&*served, &headers)
}

async fn mcp_delete(State(served): State<Shared>, headers: HeaderMap) -> Response {
    transport::delete(&*served, &headers)
}

/// `POST /agentenv`: `data/add` writes file parts under the home (when one is granted),
/// `data/get` answers the data paths' files.
async fn rpc(State(served): State<Shared>, body: Bytes) -> Response {
    let operations: &[Operation] = if served.home.is_some() || served.shape.state {
        &[Operation::Add, Operation::Get]
    } else {
        &[Operation::Get]
    };
    let request = match jsonrpc::parse_request(&body, operations) {
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
        Operation::Add => data_add(&served, &params).await.map(|()| json!({})),
        _ => data_get(&served)
            .await
            .map(|parts| json!({ "parts": parts })),
    };
    match answer {
        Ok(result) => reply::json(StatusCode::OK, &jsonrpc::success(request.id, result)),
        Err(message) => reply::json(
            StatusCode::OK,
            &RpcError::handler_failed(request.id, request.operation, message).to_json(),
        ),
    }
}

/// `data/add`: every part checked first, then the seeds in order, then the files.
async fn data_add(served: &Served, params: &Map<String, Value>) -> Result<(), String> {
    let added = data::added(params, served.shape.state, served.home.is_some())?;
    for seed in &added.seeds {
        served
            .computer
            .seed(seed)
            .await
            .map_err(|e| format!("{}: {}", e.code, e.message))?;
    }
    if added.files.is_empty() {
        return Ok(());
    }
    let home = served.home.clone().unwrap_or_default();
    tokio::task::spawn_blocking(move || files::write(&home, &added.files))
        .await
        .unwrap_or_else(|e| Err(e.to_string()))
}

/// `data/get`: the desktop's state as a `data` part when the driver keeps one, then the data
/// paths' files under the home.
async fn data_get(served: &Served) -> Result<Vec<Value>, String> {
    let mut parts = Vec::new();
    if served.shape.state {
        let state = served
            .computer
            .export_state()
            .await
            .map_err(|e| format!("{}: {}", e.code, e.message))?;
        if let Some(text) = state {
            let data: Value = serde_json::from_str(&text)
                .map_err(|e| format!("the driver's state is not JSON: {e}"))?;
            parts.push(json!({"kind": "data", "data": data}));
        }
    }
    if let Some(home) = served.home.clone() {
        let paths = served.computer.settings().data_paths;
        let files = tokio::task::spawn_blocking(move || files::export(&home, &paths))
            .await
            .unwrap_or_default();
        parts.extend(files);
    }
    Ok(parts)
}

async fn exec_run(State(served): State<Shared>, body: Bytes) -> Response {
    let Some(exec) = &served.exec else {
        return not_found().await;
    };
    let outcome = match object(&body) {
        Ok(body) => match only(&body, &["argv", "request_id", "cwd", "env", "timeout_s"]) {
            Ok(()) => exec.run(&body).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    match outcome {
        Ok(answer) => reply::json(StatusCode::OK, &answer),
        Err(e) => reply::coded(&e),
    }
}

async fn ready_status(State(served): State<Shared>) -> Response {
    let checks = served.computer.ready_checks().await;
    let ready = checks.iter().all(|c| c.ok);
    reply::json(StatusCode::OK, &json!({"ready": ready, "checks": checks}))
}

fn display_answer(served: &Served, display: &Display) -> Value {
    let modes: Vec<Value> = served
        .shape
        .modes
        .iter()
        .map(|(w, h)| json!([w, h]))
        .collect();
    json!({"width": display.width, "height": display.height, "scale": display.scale, "modes": modes})
}

async fn display_get(State(served): State<Shared>) -> Response {
    match served.computer.display_now().await {
        Ok(display) => reply::json(StatusCode::OK, &display_answer(&served, &display)),
        Err(e) => {
            let mut unavailable = Code::DeviceUnavailable.error(e.message);
            unavailable.hint = e.hint;
            reply::coded(&unavailable)
        }
    }
}

/// `POST /agentenv/ext/computer-display/set {"width", "height", "scale"?}` (only with display
/// modes): one of the modes, set in a queue turn; answers as `get` (computer.md#display).
async fn display_set(State(served): State<Shared>, body: Bytes) -> Response {
    let request = (|| {
        let body = object(&body)?;
        only(&body, &["width", "height", "scale"])?;
        let required = |key: &str| {
            integer(&body, key)?.ok_or_else(|| {
                CodedError::new(
                    INVALID_PARAMS,
                    format!("missing a required argument: '{key}'"),
                )
            })
        };
        let (width, height) = (required("width")?, required("height")?);
        let scale = match body.get("scale") {
            None | Some(Value::Null) => None,
            Some(value) => Some(value.as_f64().ok_or_else(|| {
                Code::InvalidArgument.error(format!("scale is a number, got {value}"))
            })?),
        };
        Ok((width, height, scale))
    })();
    let (width, height, scale) = match request {
        Ok(request) => request,
        Err(e) => return reply::coded(&e),
    };
    match served
        .computer
        .set_display(width, height, scale, &served.shape.modes)
        .await
    {
        Ok(display) => reply::json(StatusCode::OK, &display_answer(&served, &display)),
        Err(e) => reply::coded(&e),
    }
}

fn spaces_answer(served: &Served) -> Value {
    let settings = served.computer.settings();
    json!({
        "default_space": settings.default_space.as_str(),
        "default_norm_scale": settings.default_norm_scale,
    })
}

async fn spaces_get(State(served): State<Shared>) -> Response {
    reply::json(StatusCode::OK, &spaces_answer(&served))
}

/// A REST body as a JSON object, or the reference's framework error.
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

/// Refuses keys of `body` outside `allowed`, as the reference's framework does.
fn only(body: &Map<String, Value>, allowed: &[&str]) -> Result<(), CodedError> {
    match body.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(CodedError::new(
            INVALID_PARAMS,
            format!("got an unexpected keyword argument '{key}'"),
        )),
        None => Ok(()),
    }
}

/// An optional integer of a REST body.
fn integer(body: &Map<String, Value>, key: &str) -> Result<Option<i64>, CodedError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_i64().map(Some).ok_or_else(|| {
            Code::InvalidArgument.error(format!("{key} is an integer, got {value}"))
        }),
    }
}

async fn spaces_set(State(served): State<Shared>, body: Bytes) -> Response {
    let outcome = (|| {
        let body = object(&body)?;
        only(&body, &["default_space", "default_norm_scale"])?;
        let Some(space) = body.get("default_space") else {
            return Err(CodedError::new(
                INVALID_PARAMS,
                "missing a required argument: 'default_space'",
            ));
        };
        let space = space.as_str().unwrap_or_default().to_owned();
        let settings = served.computer.settings();
        let (space, scale) = check_space(
            Some(&space),
            integer(&body, "default_norm_scale")?,
            (Space::Frame, settings.default_norm_scale),
        )?;
        served.computer.update_settings(|s| {
            s.default_space = space;
            s.default_norm_scale = scale;
        });
        Ok(spaces_answer(&served))
    })();
    match outcome {
        Ok(answer) => reply::json(StatusCode::OK, &answer),
        Err(e) => reply::coded(&e),
    }
}

fn keyboard_answer(served: &Served) -> Value {
    let s = served.computer.settings();
    json!({
        "tap_hold_ms": s.tap_hold_ms,
        "type_delay_ms": s.type_delay_ms,
        "layout": s.layout,
        "max_hold_ms": s.max_hold_ms,
    })
}

async fn keyboard_get(State(served): State<Shared>) -> Response {
    reply::json(StatusCode::OK, &keyboard_answer(&served))
}

async fn keyboard_set(State(served): State<Shared>, body: Bytes) -> Response {
    let outcome = (|| {
        let body = object(&body)?;
        only(
            &body,
            &["tap_hold_ms", "type_delay_ms", "layout", "max_hold_ms"],
        )?;
        let ranged = |key: &str, max: i64| -> Result<Option<u32>, CodedError> {
            match integer(&body, key)? {
                None => Ok(None),
                Some(v) if (0..=max).contains(&v) => Ok(Some(v as u32)),
                Some(v) => {
                    Err(Code::InvalidArgument.error(format!("{key} is from 0 to {max}, got {v}")))
                }
            }
        };
        let tap = ranged("tap_hold_ms", 1000)?;
        let delay = ranged("type_delay_ms", 1000)?;
        let hold = ranged("max_hold_ms", 600_000)?;
        let settings = served.computer.settings();
        if let Some(layout) = body.get("layout").and_then(Value::as_str)
            && layout != settings.layout
        {
            return Err(Code::Unsupported.error(format!(
                "this computer types in the layouts ['{}'], not '{layout}'",
                settings.layout
            )));
        }
        served.computer.update_settings(|s| {
            s.tap_hold_ms = tap.unwrap_or(s.tap_hold_ms);
            s.type_delay_ms = delay.unwrap_or(s.type_delay_ms);
            s.max_hold_ms = hold.unwrap_or(s.max_hold_ms);
        });
        Ok(keyboard_answer(&served))
    })();
    match outcome {
        Ok(answer) => reply::json(StatusCode::OK, &answer),
        Err(e) => reply::coded(&e),
    }
}

fn change(served: &Served, body: &[u8], disabled: bool) -> Response {
    match Change::parse(body) {
        Ok(change) => reply::json(StatusCode::OK, &served.rules().apply(&change, disabled)),
        Err(e) => reply::coded(&e),
    }
}

async fn disable(State(served): State<Shared>, body: Bytes) -> Response {
    change(&served, &body, true)
}

async fn enable(State(served): State<Shared>, body: Bytes) -> Response {
    change(&served, &body, false)
}

/// 404 `Not Found` for any other path.
async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found").into_response()
}
