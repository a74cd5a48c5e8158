//! The HTTP framing of MCP streamable HTTP (protocol.md#sessions): headers, the JSON-RPC envelope
//! of a POST, SSE answers and HTTP-level errors, byte-compatible with the reference (mcp 1.30).

use std::borrow::Cow;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The session header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The negotiated protocol version header, sent by clients after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// Protocol versions served; `initialize` echoes the client's when it is one of them.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The version answered to a client that asks for one not served.
pub const LATEST_VERSION: &str = "2025-11-25";

/// -32700
pub const PARSE_ERROR: i64 = -32700;
/// -32600
pub const INVALID_REQUEST: i64 = -32600;
/// -32601
pub const METHOD_NOT_FOUND: i64 = -32601;
/// -32602
pub const INVALID_PARAMS: i64 = -32602;
/// -32603
pub const INTERNAL_ERROR: i64 = -32603;

/// A JSON-RPC message posted to `/mcp`, borrowed from the body.
#[derive(Deserialize)]
pub struct Message<'a> {
    jsonrpc: Cow<'a, str>,
    /// The id; none for a notification.
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    /// The method; none for a response to a server request.
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    /// The params, still JSON text.
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// What a posted message is.
pub enum Kind<'m> {
    /// A request, to answer: its id and method.
    Request(&'m RawValue, &'m str),
    /// A notification or a response: accepted with 202.
    Accepted,
}

impl<'a> Message<'a> {
    /// Reads a POST body.
    ///
    /// # Errors
    /// 400 with -32700 `Parse error: ...` for text that is not JSON, 400 with -32602
    /// `Validation error: ...` for JSON that is not one JSON-RPC message.
    pub fn parse(body: &'a [u8]) -> Result<Self, Refusal> {
        if !is_object(body) && serde_json::from_slice::<&RawValue>(body).is_ok() {
            return Err(validation_error("a JSON-RPC message is an object"));
        }
        let message: Self = serde_json::from_slice(body).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => validation_error(&e.to_string()),
            _ => Refusal::new(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                format!("Parse error: {e}"),
            ),
        })?;
        if message
            .params
            .is_some_and(|p| !is_object(p.get().as_bytes()))
        {
            return Err(validation_error(
                "a JSON-RPC message's params are an object",
            ));
        }
        let is_response = message.result.is_some() || message.error.is_some();
        if message.jsonrpc != "2.0" || (message.method.is_none() && !is_response) {
            return Err(validation_error(
                "not a JSON-RPC 2.0 request, notification or response",
            ));
        }
        Ok(message)
    }

    /// Whether this is the `initialize` request.
    pub fn is_initialize(&self) -> bool {
        self.id.is_some() && self.method.as_deref() == Some("initialize")
    }

    /// The client's reply to a request the server sent: its integer id, and its `result` or
    /// `error`; `None` for any other message.
    pub fn reply(&self) -> Option<(i64, super::sessions::Reply)> {
        let id = self.id?.get().parse().ok()?;
        match (self.result, self.error) {
            (Some(result), None) => Some((id, Ok(result.to_owned()))),
            (None, Some(error)) => Some((id, Err(error.to_owned()))),
            _ => None,
        }
    }

    /// What the message is.
    pub fn kind(&self) -> Kind<'_> {
        match (self.id, self.method.as_deref()) {
            (Some(id), Some(method)) if id.get() != "null" => Kind::Request(id, method),
            _ => Kind::Accepted,
        }
    }
}

/// Whether `json`, if it is JSON text at all, is an object. serde would also read a struct from
/// an array, which the reference's pydantic models refuse.
fn is_object(json: &[u8]) -> bool {
    json.trim_ascii_start().first() == Some(&b'{')
}

fn validation_error(detail: &str) -> Refusal {
    Refusal::new(
        StatusCode::BAD_REQUEST,
        INVALID_PARAMS,
        format!("Validation error: {detail}"),
    )
}

/// An HTTP-level refusal: answered with `status` and the JSON-RPC error object
/// `{"jsonrpc": "2.0", "id": "server-error", "error": {"code", "message"}}`.
#[derive(Debug)]
pub struct Refusal {
    /// The HTTP status.
    pub status: StatusCode,
    /// The JSON-RPC error code.
    pub code: i64,
    /// The message.
    pub message: Cow<'static, str>,
}

impl Refusal {
    /// A refusal.
    pub fn new(status: StatusCode, code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    /// The answer, naming `session` when the request is in one.
    pub fn response(&self, session: Option<&str>) -> Response {
        let id = RawValue::from_string("\"server-error\"".into()).ok();
        let body = id
            .map(|id| error_json(&id, self.code, &self.message))
            .unwrap_or_default();
        let mut response = empty(self.status, session);
        *response.body_mut() = Body::from(body);
        response
    }
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i64,
    message: &'a str,
}

#[derive(Serialize)]
struct Reply<'a, R> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorObject<'a>>,
}

/// `{"jsonrpc": "2.0", "id": id, "result": result}`, compact, appended to `out`.
///
/// # Errors
/// `result`'s, should it not serialize.
pub fn write_result_json(
    out: &mut Vec<u8>,
    id: &RawValue,
    result: &impl Serialize,
) -> serde_json::Result<()> {
    let reply = Reply {
        jsonrpc: "2.0",
        id,
        result: Some(result),
        error: None,
    };
    serde_json::to_writer(out, &reply)
}

/// `{"jsonrpc": "2.0", "id": id, "error": {"code", "message"}}`, compact.
pub fn error_json(id: &RawValue, code: i64, message: &str) -> Vec<u8> {
    let reply: Reply<'_, ()> = Reply {
        jsonrpc: "2.0",
        id,
        result: None,
        error: Some(ErrorObject { code, message }),
    };
    serde_json::to_vec(&reply).unwrap_or_default()
}

fn session_value(session: &str) -> HeaderValue {
    HeaderValue::from_str(session).unwrap_or(HeaderValue::from_static(""))
}

/// A 200 `text/event-stream` answer of `session` with `body`.
pub fn event_stream(body: Body, session: &str) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    headers.insert(SESSION_HEADER, session_value(session));
    response
}

/// The framing of an SSE event carrying one message, before and after it, as the reference
/// frames it.
const SSE_BEFORE: &[u8] = b"event: message\r\ndata: ";
const SSE_AFTER: &[u8] = b"\r\n\r\n";

/// The JSON-RPC reply to request `id`: its result, or its error.
pub fn answer_json(
    id: &RawValue,
    answer: Result<super::methods::Answer, (i64, String)>,
) -> Vec<u8> {
    match answer {
        Ok(result) => {
            let mut body = Vec::with_capacity(result.size_hint() + 64);
            match write_result_json(&mut body, id, &result) {
                Ok(()) => body,
                Err(e) => error_json(id, INTERNAL_ERROR, &e.to_string()),
            }
        }
        Err((code, message)) => error_json(id, code, &message),
    }
}

/// The reply to request `id` as one SSE event, answered at once (`content-length` set).
pub fn sse_answer(
    id: &RawValue,
    answer: Result<super::methods::Answer, (i64, String)>,
    session: &str,
) -> Response {
    match answer {
        Ok(result) => {
            let write = |body: &mut Vec<u8>| write_result_json(body, id, &result);
            match sse_with(result.size_hint() + 64, session, write) {
                Ok(response) => response,
                Err(e) => sse(&error_json(id, INTERNAL_ERROR, &e.to_string()), session),
            }
        }
        Err((code, message)) => sse(&error_json(id, code, &message), session),
    }
}

/// A ping comment as sse-starlette writes one: `: ping - 2026-12-07 15:44:10.123456+00:00`.
pub fn ping() -> Bytes {
    let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S%.6f+00:00");
    Bytes::from(format!(": ping - {now}\r\n\r\n"))
}

/// `message` framed as one SSE event: `event: message`, its `data`, a blank line.
pub fn sse_event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(SSE_BEFORE.len() + message.len() + SSE_AFTER.len());
    event.extend_from_slice(SSE_BEFORE);
    event.extend_from_slice(message);
    event.extend_from_slice(SSE_AFTER);
    event.into()
}

/// A 200 SSE answer carrying one message, as the reference frames it.
pub fn sse(message: &[u8], session: &str) -> Response {
    event_stream(Body::from(sse_event(message)), session)
}

/// A 200 SSE answer carrying the message `write` appends to its body (about `size_hint`
/// bytes), written in place: the message is encoded once, into the body sent.
///
/// # Errors
/// `write`'s.
pub fn sse_with(
    size_hint: usize,
    session: &str,
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<Response> {
    let mut body = Vec::with_capacity(SSE_BEFORE.len() + size_hint + SSE_AFTER.len());
    body.extend_from_slice(SSE_BEFORE);
    write(&mut body)?;
    body.extend_from_slice(SSE_AFTER);
    Ok(event_stream(Body::from(body), session))
}

/// An answer with no body (`202` for notifications, `200` for `DELETE`).
pub fn empty(status: StatusCode, session: Option<&str>) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(session) = session {
        headers.insert(SESSION_HEADER, session_value(session));
    }
    response
}

/// The media types an `Accept` header lists: `(application/json, text/event-stream)`.
pub fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let types = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim);
    let (mut json, mut sse) = (false, false);
    for t in types {
        json |= t.starts_with("application/json");
        sse |= t.starts_with("text/event-stream");
    }
    (json, sse)
}

/// Whether the `Content-Type` is JSON.
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == "application/json"))
}

/// The protocol version header's error, when it names a version not served (no header means
/// the default version, which is served).
pub fn unsupported_version(headers: &HeaderMap) -> Option<Refusal> {
    let version = headers.get(PROTOCOL_VERSION_HEADER)?;
    let version = version.to_str().unwrap_or("");
    (!SUPPORTED_VERSIONS.contains(&version)).then(|| {
        let message = format!(
            "Bad Request: Unsupported protocol version: {version}. Supported versions: {}",
            SUPPORTED_VERSIONS.join(", ")
        );
        Refusal::new(StatusCode::BAD_REQUEST, INVALID_REQUEST, message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_classified() {
        let m = Message::parse(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#)
            .unwrap();
        assert!(matches!(m.kind(), Kind::Request(id, "tools/list") if id.get() == "7"));
        let n =
            Message::parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(n.kind(), Kind::Accepted));
        let r = Message::parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap();
        assert!(matches!(r.kind(), Kind::Accepted));
        assert!(
            Message::parse(br#"{"jsonrpc":"2.0","id":"a","method":"initialize"}"#)
                .unwrap()
                .is_initialize()
        );
    }

    #[test]
    fn bad_bodies_get_the_reference_codes() {
        let status = |body: &[u8]| Message::parse(body).err().map(|r| r.status);
        assert_eq!(status(b"{nope"), Some(StatusCode::BAD_REQUEST));
        assert_eq!(status(b"[]"), Some(StatusCode::BAD_REQUEST));
        assert_eq!(
            status(br#"{"jsonrpc":"1.0","method":"x"}"#),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            status(br#"{"jsonrpc":"2.0","id":1}"#),
            Some(StatusCode::BAD_REQUEST)
        );
    }

    #[test]
    fn a_message_or_params_that_are_not_an_object_get_a_validation_error() {
        let code = |body: &[u8]| Message::parse(body).err().map(|r| (r.status, r.code));
        let refused = Some((StatusCode::BAD_REQUEST, INVALID_PARAMS));
        assert_eq!(code(br#" ["2.0", 1, "tools/list"]"#), refused);
        assert_eq!(code(br#""2.0""#), refused);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["x", {}]}"#),
            refused
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#),
            refused
        );
        assert_eq!(code(br#"[nope"#).map(|(_, c)| c), Some(PARSE_ERROR));
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#),
            None
        );
    }

    #[test]
    fn replies_are_compact_json_rpc() {
        let id = RawValue::from_string("3".into()).unwrap();
        let result = RawValue::from_string("{}".into()).unwrap();
        let mut out = b"data: ".to_vec();
        write_result_json(&mut out, &id, &result).unwrap();
        assert_eq!(out, br#"data: {"jsonrpc":"2.0","id":3,"result":{}}"#);
        assert_eq!(
            error_json(&id, METHOD_NOT_FOUND, "Method not found"),
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#
        );
    }

    #[test]
    fn accept_and_content_type_checks() {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        assert_eq!(accepts(&h), (true, true));
        assert!(is_json(&h));
        h.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
        assert_eq!(accepts(&h), (false, false));
    }
}
