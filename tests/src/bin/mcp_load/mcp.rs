//! MCP over streamable HTTP: one client's session (handshake, tool calls, close) and the
//! prebuilt bodies of its `tools/call` requests.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use bytes::{BufMut as _, Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, Uri};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::CHANNEL;
use crate::conn::{Conn, Target, base_headers, request, require_success};
use crate::rpc::rpc_answer;

/// The MCP protocol version the clients ask for (the reference ToolSession's).
const PROTOCOL_VERSION: &str = "2025-11-25";
/// How long closing a session may take before it is left to expire.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// The caller-role header (§6).
const ROLE_HEADER: &str = "agentenv-role";
/// The MCP session header (§5.1).
const SESSION_HEADER: &str = "mcp-session-id";
/// The MCP protocol-version header (§5.1).
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
struct ToolOutcome {
    /// Whether the tool failed (absent = false, as in MCP).
    #[serde(default, rename = "isError")]
    is_error: bool,
}

/// One client's MCP session over its own connection.
pub(crate) struct Session {
    /// The server.
    target: Arc<Target>,
    /// The connection the session's requests go over.
    pub(crate) conn: Conn,
    /// The MCP endpoint's path.
    uri: Uri,
    /// Every request's headers: host, content type, accept, role, session, protocol version.
    headers: HeaderMap,
    /// The id of the next request.
    next_id: u64,
}

impl Session {
    /// Connects and opens a session with role `role`: `initialize`, then
    /// `notifications/initialized`.
    pub(crate) async fn open(target: Arc<Target>, uri: Uri, role: String) -> anyhow::Result<Self> {
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
            "clientInfo": {"name": "mcp_load", "version": env!("CARGO_PKG_VERSION")}}});
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
    pub(crate) fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// POSTs `body` to the MCP endpoint with the session's headers.
    async fn post(&mut self, body: Bytes) -> anyhow::Result<Response<Bytes>> {
        self.conn
            .send(request(Method::POST, &self.uri, &self.headers, body))
            .await
    }

    /// Sends the `tools/call` request `body` (of id `id`); fails unless it answers a result with
    /// `isError` false within `timeout`.
    pub(crate) async fn call_tool(
        &mut self,
        body: Bytes,
        id: u64,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let Ok(response) = tokio::time::timeout(timeout, self.post(body)).await else {
            self.conn.abandon();
            bail!("no answer within {timeout:?}");
        };
        let outcome: ToolOutcome = rpc_answer(&response?, id, "tools/call")?;
        if outcome.is_error {
            bail!("the tool answered isError: true");
        }
        Ok(())
    }

    /// Replaces a closed connection with a new one; the session goes on over it.
    pub(crate) async fn reconnect(&mut self) -> anyhow::Result<()> {
        self.conn = Conn::open(&self.target).await.context("reconnecting")?;
        Ok(())
    }

    /// Ends the session (`DELETE`), leaving it to expire if that fails.
    pub(crate) async fn close(&mut self) {
        if self.conn.is_closed() && self.reconnect().await.is_err() {
            return;
        }
        let delete = request(Method::DELETE, &self.uri, &self.headers, Bytes::new());
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, self.conn.send(delete)).await;
    }
}

/// The `tools/call` bodies of one client, from a prebuilt template: only the request id and the
/// message number change from call to call.
pub(crate) struct CallTemplate {
    /// The body up to the request id.
    head: &'static [u8],
    /// From after the id to the message number: the tool, the fixed arguments, `"bench <i> `.
    middle: Vec<u8>,
    /// The end of the body.
    tail: &'static [u8],
    /// The buffer bodies are written into; a body's memory is reused once it has been sent.
    buffer: BytesMut,
}

impl CallTemplate {
    /// The template of client `client` calling `tool`.
    pub(crate) fn new(tool: &str, client: usize) -> Self {
        let name = Value::from(tool).to_string();
        let channel = Value::from(CHANNEL).to_string();
        let middle = format!(
            r#","method":"tools/call","params":{{"name":{name},"arguments":{{"channel":{channel},"to":"sink","text":"bench {client} "#
        );
        Self {
            head: br#"{"jsonrpc":"2.0","id":"#,
            middle: middle.into_bytes(),
            tail: br#""}}}"#,
            buffer: BytesMut::new(),
        }
    }

    /// The body of request `id` sending message number `n`.
    pub(crate) fn body(&mut self, id: u64, n: u64) -> Bytes {
        self.buffer
            .reserve(self.head.len() + self.middle.len() + self.tail.len() + 40);
        self.buffer.put_slice(self.head);
        // Writing into a BytesMut with room reserved cannot fail.
        let _ = write!(self.buffer, "{id}");
        self.buffer.put_slice(&self.middle);
        let _ = write!(self.buffer, "{n}");
        self.buffer.put_slice(self.tail);
        self.buffer.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_bodies_are_json() {
        let mut template = CallTemplate::new("slack_send_message", 3);
        let first = template.body(2, 0);
        let second = template.body(3, 1);
        let value: Value = serde_json::from_slice(&second).unwrap();
        assert_eq!(value["id"], 3);
        assert_eq!(value["params"]["name"], "slack_send_message");
        assert_eq!(
            value["params"]["arguments"],
            json!({"channel": "bench", "to": "sink", "text": "bench 3 1"})
        );
        assert_eq!(serde_json::from_slice::<Value>(&first).unwrap()["id"], 2);
    }
}
