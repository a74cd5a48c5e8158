//! JSON-RPC answers: reading the reply to one request from a JSON or an SSE HTTP answer.

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::Response;
use http::header::{self, HeaderValue};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::conn::require_success;
use super::sse::SseMessages;

/// A JSON-RPC answer, with the `result` read as `R` and only what the bench checks of the rest.
#[derive(Deserialize)]
struct Reply<R> {
    /// The id of the request answered.
    #[serde(default)]
    id: Option<Value>,
    /// The result, on success.
    result: Option<R>,
    /// The error, on failure.
    error: Option<RpcError>,
}

/// A JSON-RPC error object.
#[derive(Deserialize)]
struct RpcError {
    /// The error code.
    code: i64,
    /// The error message.
    message: String,
}

impl<R> Reply<R> {
    /// Whether this answers request `id`.
    fn answers(&self, id: u64) -> bool {
        self.id.as_ref().and_then(Value::as_u64) == Some(id)
            && (self.result.is_some() || self.error.is_some())
    }

    /// The result, or the error as an error.
    fn into_result(self, method: &str) -> anyhow::Result<R> {
        match (self.result, self.error) {
            (_, Some(e)) => bail!("{method} failed: {} (code {})", e.message, e.code),
            (Some(result), None) => Ok(result),
            (None, None) => bail!("{method}: the answer has neither result nor error"),
        }
    }
}

/// The answer to JSON-RPC request `id` of `method` in an HTTP answer: the body itself when it is
/// `application/json`, or the first SSE `message` event answering `id` when it is
/// `text/event-stream` (as the reference's `ToolSession` client reads it).
pub fn rpc_answer<R: DeserializeOwned>(
    response: &Response<Bytes>,
    id: u64,
    method: &str,
) -> anyhow::Result<R> {
    require_success(response)?;
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(HeaderValue::as_bytes)
        .unwrap_or_default();
    let body = response.body();
    if content_type.starts_with(b"application/json") {
        let reply: Reply<R> =
            serde_json::from_slice(body).with_context(|| format!("{method}: the answer"))?;
        return reply.into_result(method);
    }
    if !content_type.starts_with(b"text/event-stream") {
        bail!(
            "{method}: unexpected content-type {:?}",
            String::from_utf8_lossy(content_type)
        );
    }
    for data in SseMessages::new(body) {
        let reply: Reply<R> =
            serde_json::from_slice(&data).with_context(|| format!("{method}: an SSE event"))?;
        if reply.answers(id) {
            return reply.into_result(method);
        }
    }
    bail!("{method}: the event stream ended without the answer")
}
