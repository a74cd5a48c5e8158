//! MCP over streamable HTTP: one client's session (handshake, tool calls, close).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, Uri};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::conn::{Conn, Target, base_headers, request, require_success};
use super::rpc::rpc_answer;

/// The MCP protocol version the clients ask for (the reference ToolSession's).
const PROTOCOL_VERSION: &str = "2025-11-25";
/// How long closing a session may take before it is left to expire.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// The caller-role header (protocol.md#callers).
const ROLE_HEADER: &str = "agentenv-role";
/// The MCP session header (protocol.md#sessions).
const SESSION_HEADER: &str = "mcp-session-id";
/// The MCP protocol-version header (protocol.md#sessions).
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// What the bench reads of an `initialize` result.
#[derive(Deserialize)]
struct Initialized {
    /// The protocol version the server chose.
    #[serde(default, rename = "protocolVersion")]
    protocol_version: Option<String>,
}

/// What the bench reads of a `tools/call` result.
#[derive(Deserialize)]
struct ToolResult {
    /// Whether the tool failed (absent = false, as in MCP).
    #[serde(default, rename = "isError")]
    is_error: bool,
    /// The structured content, kept unparsed: only an error's is read.
    #[serde(default, rename = "structuredContent")]
    structured: Option<Box<RawValue>>,
}

/// The `code` of a coded error's structured content (protocol.md#tool-results).
#[derive(Deserialize)]
struct ErrorCode {
    /// The code, e.g. `deadline_exceeded`.
    #[serde(default)]
    code: Option<String>,
}

/// How a `tools/call` that got a result turned out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolOutcome {
    /// A result with `isError` false.
    Ok,
    /// An `isError` result, with its coded error's code when its structured content has one.
    Failed(Option<String>),
}

impl ToolResult {
    /// The outcome: for an error, the code of its structured content, if any.
    fn outcome(self) -> ToolOutcome {
        if !self.is_error {
            return ToolOutcome::Ok;
        }
        let code = self
            .structured
            .and_then(|raw| serde_json::from_str::<ErrorCode>(raw.get()).ok())
            .and_then(|e| e.code);
        ToolOutcome::Failed(code)
    }
}

/// One client's MCP session over its own connection.
pub struct Session {
    /// The server.
    target: Arc<Target>,
    /// The connection the session's requests go over.
    pub conn: Conn,
    /// The MCP endpoint's path.
    uri: Uri,
    /// Every request's headers: host, content type, accept, role, session, protocol version.
    headers: HeaderMap,
    /// The id of the next request.
    next_id: u64,
}

impl Session {
    /// Connects and opens a session with role `role` on the MCP endpoint at path `uri`:
    /// `initialize`, then `notifications/initialized`.
    ///
    /// # Errors
    /// When the server cannot be reached or the handshake fails.
    pub async fn open(target: Arc<Target>, uri: Uri, role: String) -> anyhow::Result<Self> {
        let conn = Conn::open(&target).await?;
        let mut headers = base_headers(&target);
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(ROLE_HEADER, HeaderValue::try_from(role)?);
        let mut session = Self {
            target,
            conn,
            uri,
            headers,
            next_id: 1,
        };
        session
            .initialize()
            .await
            .context("opening an MCP session")?;
        Ok(session)
    }

    /// The MCP handshake: learns the session id and protocol version, then confirms.
    async fn initialize(&mut self) -> anyhow::Result<()> {
        let id = self.next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "envhost-tests", "version": env!("CARGO_PKG_VERSION")}}});
        let response = self.post(body.to_string().into()).await?;
        let initialized: Initialized = rpc_answer(&response, id, "initialize")?;
        if let Some(session_id) = response.headers().get(SESSION_HEADER) {
            self.headers.insert(SESSION_HEADER, session_id.clone());
        }
        let version = initialized
            .protocol_version
            .as_deref()
            .unwrap_or(PROTOCOL_VERSION);
        self.headers
            .insert(PROTOCOL_HEADER, HeaderValue::from_str(version)?);
        let confirm = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self.post(confirm.to_string().into()).await?;
        if response.status().as_u16() >= 400 {
            require_success(&response).context("notifications/initialized")?;
        }
        Ok(())
    }

    /// Takes the next request id.
    pub fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// POSTs `body` to the MCP endpoint with the session's headers.
    async fn post(&mut self, body: Bytes) -> anyhow::Result<Response<Bytes>> {
        self.conn
            .send(request(Method::POST, &self.uri, &self.headers, &body))
            .await
    }

    /// Sends the `tools/call` request `body` (of id `id`); fails unless it answers a result with
    /// `isError` false within `timeout`.
    ///
    /// # Errors
    /// When no result comes within `timeout`, the answer is not a result, or the result is an
    /// error.
    pub async fn call_tool(
        &mut self,
        body: Bytes,
        id: u64,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        match self.call_tool_outcome(body, id, timeout).await? {
            ToolOutcome::Ok => Ok(()),
            ToolOutcome::Failed(None) => bail!("the tool answered isError: true"),
            ToolOutcome::Failed(Some(code)) => bail!("the tool answered isError: true ({code})"),
        }
    }

    /// Sends the `tools/call` request `body` (of id `id`) and answers how its result turned out.
    /// A call that gets no answer within `timeout` abandons the connection (see
    /// [`Session::reconnect`]).
    ///
    /// # Errors
    /// When no result comes within `timeout` or the answer is not a result.
    pub async fn call_tool_outcome(
        &mut self,
        body: Bytes,
        id: u64,
        timeout: Duration,
    ) -> anyhow::Result<ToolOutcome> {
        let Ok(response) = tokio::time::timeout(timeout, self.post(body)).await else {
            self.conn.abandon();
            bail!("no answer within {timeout:?}");
        };
        let result: ToolResult = rpc_answer(&response?, id, "tools/call")?;
        Ok(result.outcome())
    }

    /// Calls tool `name` with `arguments` (a body built for the call, unlike the prebuilt ones
    /// of [`Session::call_tool`]).
    ///
    /// # Errors
    /// As [`Session::call_tool_outcome`].
    pub async fn call(
        &mut self,
        name: &str,
        arguments: &Value,
        timeout: Duration,
    ) -> anyhow::Result<ToolOutcome> {
        let id = self.next_id();
        let body = tool_call_body(id, name, arguments);
        self.call_tool_outcome(body, id, timeout).await
    }

    /// Replaces a closed connection with a new one; the session goes on over it.
    ///
    /// # Errors
    /// When the server cannot be reached.
    pub async fn reconnect(&mut self) -> anyhow::Result<()> {
        self.conn = Conn::open(&self.target).await.context("reconnecting")?;
        Ok(())
    }

    /// Ends the session (`DELETE`), leaving it to expire if that fails.
    pub async fn close(&mut self) {
        if self.conn.is_closed() && self.reconnect().await.is_err() {
            return;
        }
        let delete = request(Method::DELETE, &self.uri, &self.headers, &[]);
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, self.conn.send(delete)).await;
    }
}

/// The body of `tools/call` request `id` calling `name` with `arguments`.
pub fn tool_call_body(id: u64, name: &str, arguments: &Value) -> Bytes {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
    .to_string()
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(result: &str) -> ToolOutcome {
        serde_json::from_str::<ToolResult>(result)
            .unwrap()
            .outcome()
    }

    #[test]
    fn outcomes_read_the_error_code() {
        assert_eq!(outcome(r#"{"content": []}"#), ToolOutcome::Ok);
        assert_eq!(
            outcome(r#"{"isError": false, "structuredContent": {"result": "ok"}}"#),
            ToolOutcome::Ok
        );
        assert_eq!(
            outcome(r#"{"isError": true, "structuredContent": {"code": "deadline_exceeded"}}"#),
            ToolOutcome::Failed(Some("deadline_exceeded".into()))
        );
        assert_eq!(
            outcome(r#"{"isError": true, "structuredContent": null}"#),
            ToolOutcome::Failed(None)
        );
        assert_eq!(
            outcome(r#"{"isError": true, "structuredContent": [1]}"#),
            ToolOutcome::Failed(None)
        );
    }
}
