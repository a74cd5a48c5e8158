//! A hosted episode: one instance of an environment with what the protocol keeps per episode
//! (its tool-access rules), and its operations with the protocol's semantics, the same
//! in-process as over HTTP.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use envhost_protocol::card::card;
use envhost_protocol::description::Object;
use envhost_protocol::error::{Applied, CodedError, EXTENSION_FAILED, PERMISSION_DENIED};
use envhost_protocol::extension::bind;
use envhost_protocol::json::{to_python_json, to_text};
use envhost_protocol::tool_access::{Change, Rules};
use envhost_protocol::{Caller, Content, Part, ToolResult};
use envhost_runtime::bindings::{ContentBlock as GuestBlock, ToolResult as GuestResult};
use envhost_runtime::{Asked, CallContext, CallError, ClientError, Namespace, Peer, Runner};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::catalog::{Catalog, Route, ServedTool};
use super::metrics::{CallKind, Metrics};
use crate::ids::Secret;
use crate::transfers::Resolver;
use crate::transfers::namespace::{NamespaceGrant, NamespaceUploader};

/// Why a data-plane operation failed (protocol.md#envelope).
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The params do not fit: JSON-RPC -32602 with this detail.
    #[error("invalid params: {0}")]
    Params(String),
    /// The operation failed: JSON-RPC -32000 with this message.
    #[error("{0}")]
    Failed(String),
    /// The episode is busy (its queue is full): nothing was done; retry later (HTTP 429).
    #[error(transparent)]
    Busy(CallError),
}

impl From<CallError> for DataError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Busy { .. } => Self::Busy(e),
            CallError::Guest(coded) => Self::Failed(coded.message),
            other => Self::Failed(other.to_string()),
        }
    }
}

/// One hosted episode. Cheap to share (`Arc`); calls into it are serialised by its
/// [`Runner`].
pub struct Episode {
    id: String,
    /// The id's key in the host's tables ([`crate::ids`]).
    key: u128,
    /// The secret of its agent URL.
    secret: Secret,
    catalog: Arc<Catalog>,
    runner: Runner,
    resolver: Resolver,
    metrics: Arc<Metrics>,
    rules: Mutex<Rules>,
    /// Since when the host has existed, to stamp uses.
    epoch: Instant,
    /// Milliseconds after `epoch` of the last call.
    last_used: AtomicU64,
    /// Milliseconds after `epoch` when the episode expires; `u64::MAX` never.
    expires: AtomicU64,
}

/// `invalid_result`: the environment answered something the protocol cannot carry.
fn invalid_result(what: impl std::fmt::Display) -> CodedError {
    CodedError::new("invalid_result", format!("the environment answered {what}"))
}

/// A guest's tool result as the protocol's (image bytes base64-encoded, other blocks checked to
/// be MCP content blocks); structured content or `_meta` that is not a JSON object, or a block
/// that is no MCP content block, makes it an `invalid_result` coded error.
fn tool_result(result: GuestResult) -> ToolResult {
    match checked_result(result) {
        Ok(result) => result,
        Err(error) => ToolResult::coded(error),
    }
}

fn checked_result(result: GuestResult) -> Result<ToolResult, CodedError> {
    let structured = result
        .structured_content
        .map(RawValue::from_string)
        .transpose()
        .map_err(|e| invalid_result(format_args!("structured content that is not JSON: {e}")))?;
    let meta = result
        .meta
        .map(|meta| {
            serde_json::from_str::<Map<String, Value>>(&meta).map_err(|e| {
                invalid_result(format_args!("a _meta that is not a JSON object: {e}"))
            })?;
            RawValue::from_string(meta).map_err(invalid_result)
        })
        .transpose()?;
    let content = result
        .content
        .into_iter()
        .map(|block| match block {
            GuestBlock::Text(text) => Ok(Content::Text(text)),
            GuestBlock::Image(image) => Ok(Content::Image {
                data: BASE64.encode(image.data),
                mime_type: image.mime_type,
            }),
            GuestBlock::Block(json) => {
                serde_json::from_str::<rmcp::model::ContentBlock>(&json).map_err(|e| {
                    invalid_result(format_args!("a content block MCP does not define: {e}"))
                })?;
                RawValue::from_string(json)
                    .map(Content::Block)
                    .map_err(invalid_result)
            }
        })
        .collect::<Result<_, _>>()?;
    let mut out = if result.is_error {
        ToolResult::failure(content, structured)
    } else {
        ToolResult::success(content, structured)
    };
    out.meta = meta;
    Ok(out)
}

/// `result` as the reference's MCP server lets it through (protocol.md#tool-results): a
/// successful result of a tool with an output schema must carry structured content that fits
/// it, else the answer is the error result `Output validation error: <why>`.
fn checked_output(tool: &ServedTool, result: ToolResult) -> ToolResult {
    let Some(validator) = &tool.output_validator else {
        return result;
    };
    if result.is_error {
        return result;
    }
    let Some(structured) = result.structured() else {
        return ToolResult::text_error(
            "Output validation error: outputSchema defined but no structured output returned"
                .into(),
        );
    };
    match validator.iter_errors(&structured).next() {
        None => result,
        Some(error) => ToolResult::text_error(format!("Output validation error: {error}")),
    }
}

/// The validation errors of `arguments`, one line each with its location; none when they fit
/// (checked first without collecting errors, the cheap common case).
fn validation_errors(validator: &jsonschema::Validator, arguments: &Value) -> Option<String> {
    if validator.is_valid(arguments) {
        return None;
    }
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
    Some(format!(
        "{} validation error{}:\n{}",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" },
        errors.join("\n")
    ))
}

/// `extension_failed` (500, applied unknown): an extension failed without a coded answer.
fn extension_failed(message: String) -> CodedError {
    CodedError {
        code: EXTENSION_FAILED.into(),
        message,
        retryable: false,
        applied: Applied::Unknown,
        hint: None,
        status: 500,
    }
}

impl Episode {
    pub(super) fn new(
        (key, id): (u128, String),
        catalog: Arc<Catalog>,
        runner: Runner,
        resolver: Resolver,
        metrics: Arc<Metrics>,
        epoch: Instant,
    ) -> Self {
        let episode = Self {
            id,
            key,
            secret: Secret::fresh(),
            catalog,
            runner,
            resolver,
            metrics,
            rules: Mutex::new(Rules::default()),
            epoch,
            last_used: AtomicU64::new(0),
            expires: AtomicU64::new(u64::MAX),
        };
        episode.touch(Instant::now());
        episode
    }

    /// The episode's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id's key in the host's tables.
    pub(crate) fn key(&self) -> u128 {
        self.key
    }

    /// The episode's own secret, which its agent URL carries (serve.md#access); made with the
    /// episode, never the same for two.
    pub fn secret(&self) -> &Secret {
        &self.secret
    }

    /// The environment it is an episode of.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The runtime side of the episode (instance, journal).
    pub(super) fn runner(&self) -> &Runner {
        &self.runner
    }

    /// A copy of the tool-access rules.
    pub(super) fn tool_access(&self) -> Rules {
        self.rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the tool-access rules (a restored episode takes its snapshot's).
    pub(super) fn set_tool_access(&self, rules: Rules) {
        *self.rules.lock().unwrap_or_else(PoisonError::into_inner) = rules;
    }

    /// Stamps a use at `now`.
    fn touch(&self, now: Instant) {
        let ms = now.saturating_duration_since(self.epoch).as_millis();
        self.last_used
            .store(u64::try_from(ms).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// Milliseconds since the last call, at `now` (milliseconds since the host's start).
    pub(super) fn idle_ms(&self, now: u64) -> u64 {
        now.saturating_sub(self.last_used.load(Ordering::Relaxed))
    }

    /// Makes the episode expire `lifetime` from now, whatever its calls: the host's next
    /// [`super::Host::evict_idle`] after that drops it.
    pub fn expire_after(&self, lifetime: std::time::Duration) {
        let at = Instant::now().saturating_duration_since(self.epoch) + lifetime;
        self.expires.store(
            u64::try_from(at.as_millis()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Whether the episode has expired at `now` (milliseconds since the host's start).
    pub(super) fn expired(&self, now: u64) -> bool {
        now >= self.expires.load(Ordering::Relaxed)
    }

    /// Runs `call`, stamping the use and recording its outcome and latency under `kind`.
    async fn record<T>(
        &self,
        kind: CallKind,
        call: impl Future<Output = Result<T, CallError>>,
    ) -> Result<T, CallError> {
        let started = Instant::now();
        self.touch(started);
        let outcome = call.await;
        self.metrics.observe(kind, &outcome, started.elapsed());
        outcome
    }

    /// `data/reset` (protocol.md#reset).
    ///
    /// # Errors
    /// [`DataError`] as the environment failed.
    pub async fn reset(&self) -> Result<(), DataError> {
        Ok(self.record(CallKind::Reset, self.runner.reset()).await?)
    }

    /// `data/add` (protocol.md#add-data): every file part fetched (inline bytes, `file://` under
    /// the data roots, `http(s)://`), then all the parts handed to the environment.
    ///
    /// # Errors
    /// [`DataError::Params`] for no parts; [`DataError::Failed`] when a file cannot be fetched
    /// (nothing is handed over then) or the environment fails.
    pub async fn add_data(&self, parts: Vec<Part>) -> Result<(), DataError> {
        if parts.is_empty() {
            return Err(DataError::Params(
                "parts: list should have at least 1 item".into(),
            ));
        }
        let parts = self
            .resolver
            .resolve_parts(parts)
            .await
            .map_err(|e| DataError::Failed(e.to_string()))?;
        Ok(self
            .record(CallKind::Add, self.runner.add_data(parts))
            .await?)
    }

    /// The tool descriptions the environment changed in this episode (protocol.md#tool-updates),
    /// by declared name; none when it changed none.
    pub fn changed_descriptions(&self) -> Option<BTreeMap<String, String>> {
        self.runner.changed_descriptions()
    }

    /// The episode's card (protocol.md#card), as encoded once for the environment unless the
    /// environment changed a tool's description in this episode.
    pub fn card(&self) -> Bytes {
        let Some(changed) = self.changed_descriptions() else {
            return self.catalog.card.clone();
        };
        let mut description = self.catalog.description.clone();
        for tool in &mut description.tools {
            if let Some(text) = changed.get(&tool.declared_name) {
                tool.description = Some(text.clone());
            }
        }
        Bytes::from(to_python_json(&card(&description)))
    }

    /// `data/get` (protocol.md#get-data).
    ///
    /// # Errors
    /// [`DataError`] as the environment failed.
    pub async fn get_data(&self) -> Result<Vec<Part>, DataError> {
        self.get_data_with(None).await
    }

    /// `data/get` with the `write_namespace` grant its caller sent, if any: the environment may
    /// upload its export under it and answer the uploaded objects' parts (protocol.md#exports).
    ///
    /// # Errors
    /// [`DataError`] as the environment failed (an upload failure it does not recover from
    /// included).
    pub async fn get_data_with(
        &self,
        grant: Option<NamespaceGrant>,
    ) -> Result<Vec<Part>, DataError> {
        let peer = grant.map(|grant| {
            let uploader = NamespaceUploader::new(self.resolver.grants().clone(), grant);
            Arc::new(Exporting(uploader)) as Arc<dyn Peer>
        });
        Ok(self
            .record(CallKind::Get, self.runner.get_data_through(peer))
            .await?)
    }

    /// Whether `tool` is hidden from and refused to `caller` (protocol.md#visibility); always false
    /// when the environment does not enforce tool access.
    pub fn is_disabled(&self, caller: &Caller, tool: &ServedTool) -> bool {
        self.catalog.description.tool_access
            && self
                .rules
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_disabled(
                    caller.role_key(),
                    &tool.tool.name,
                    tool.tool.hidden_by_default,
                )
    }

    /// The tools `caller` may use, in card order (protocol.md#tool-listing,
    /// protocol.md#tool-access-over-mcp).
    pub fn tools(&self, caller: &Caller) -> Vec<&ServedTool> {
        self.catalog
            .tools
            .iter()
            .filter(|t| !self.is_disabled(caller, t))
            .collect()
    }

    /// `tools/call` for `caller` (protocol.md#tool-results): unknown tools, refusals by tool
    /// access and arguments that fail the input schema are error results, as are the
    /// environment's coded errors and faults (with their [`CodedError`]).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        caller: Caller,
    ) -> ToolResult {
        self.call_tool_with(name, arguments, caller, None).await
    }

    /// [`Episode::call_tool`], with the guest's progress reports and log records meanwhile
    /// sent to `peer` as well (protocol.md#progress, protocol.md#logging).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        caller: Caller,
        peer: Option<Arc<dyn Peer>>,
    ) -> ToolResult {
        let Some(tool) = self.catalog.tool(name) else {
            return ToolResult::text_error(format!("Unknown tool: {name}"));
        };
        if self.is_disabled(&caller, tool) {
            let mut refusal = CodedError::new(
                PERMISSION_DENIED,
                format!("Tool '{name}' is disabled for role '{}'", caller.role_key()),
            );
            refusal.status = 403;
            return ToolResult::coded(refusal);
        }
        let mut arguments = arguments;
        tool.argument_types.coerce(&mut arguments);
        let arguments = Value::Object(arguments);
        if let Some(errors) = validation_errors(&tool.validator, &arguments) {
            return ToolResult::text_error(format!("Error executing tool {name}: {errors}"));
        }
        let arguments = to_text(&arguments);
        let context = CallContext::new(caller, name.to_owned(), arguments.clone());
        let call = self
            .runner
            .call_tool(&tool.tool.declared_name, arguments, context, peer);
        match self.record(CallKind::Tool, call).await {
            Ok(result) => checked_output(tool, tool_result(result)),
            Err(e) => ToolResult::coded(e.to_coded()),
        }
    }

    /// Answers MCP request `method` (`resources/list`, `resources/templates/list`,
    /// `resources/read`, `prompts/list`, `prompts/get`, `completion/complete`) with `params`
    /// (protocol.md#resources-and-prompts): the environment's result object, checked against
    /// MCP's shape for the method.
    ///
    /// # Errors
    /// The environment's coded error (`method_not_found` when it serves none of these),
    /// `invalid_result` for an answer of another shape, and the runtime's errors as coded ones.
    pub async fn call_mcp(
        &self,
        method: &str,
        params: &Map<String, Value>,
    ) -> Result<Box<RawValue>, CodedError> {
        let call = self
            .runner
            .call_mcp(method, to_text(&Value::Object(params.clone())));
        let answer = self
            .record(CallKind::Mcp, call)
            .await
            .map_err(|e| e.to_coded())?;
        super::mcp_results::check(method, &answer).map_err(invalid_result)?;
        RawValue::from_string(answer).map_err(invalid_result)
    }

    /// Calls extension method `route` with `params` for `caller` (protocol.md#extension-calls): the
    /// params are bound to the method's request schema and coerced first.
    ///
    /// # Errors
    /// The coded error to answer: `invalid_params` (400) for params that do not fit, the
    /// environment's own coded errors, `busy` (429), and `extension_failed` (500) for faults.
    pub async fn call_extension(
        &self,
        route: &Route,
        params: Object,
        caller: Caller,
    ) -> Result<Value, CodedError> {
        let request = to_text(&Value::Object(bind(params, &route.method.request_schema)?));
        let (uri, op) = (&route.uri, &route.method.op);
        let context = CallContext::new(caller, format!("{uri}#{op}"), request.clone());
        let call = self.runner.call_extension(uri, op, request, context);
        match self.record(CallKind::Extension, call).await {
            Ok(answer) => serde_json::from_str(&answer)
                .map_err(|e| extension_failed(format!("the extension answered invalid JSON: {e}"))),
            Err(CallError::Guest(e)) => Err(e),
            Err(e @ CallError::Busy { .. }) => Err(e.to_coded()),
            Err(other) => Err(extension_failed(other.to_string())),
        }
    }

    /// Applies a tool-access change (protocol.md#rule-store); answers the rules now stored under
    /// its role.
    pub fn change_tool_access(&self, change: &Change, disabled: bool) -> Value {
        self.rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .apply(change, disabled)
    }
}

/// The caller of a `data/get` that sent a grant, as its guest reaches it: the grant's
/// namespace, and nothing else (no client to ask, no progress to report).
struct Exporting(Arc<NamespaceUploader>);

impl Peer for Exporting {
    fn request(&self, _method: String, _params: String) -> Asked {
        Box::pin(async {
            Err(ClientError {
                code: -32601,
                message: "no MCP client is calling: requests reach only the client of a tool \
                          call served over MCP"
                    .into(),
            })
        })
    }

    fn progress(&self, _progress: f64, _total: Option<f64>, _message: Option<String>) {}

    fn log(&self, _level: tracing::Level, _message: &str, _fields: Option<&str>) {}

    fn namespace(&self) -> Option<Arc<dyn Namespace>> {
        Some(self.0.clone())
    }
}
