//! Requests to the client of the tool call being served (MCP `sampling/createMessage`,
//! `elicitation/create`, `roots/list`): the call waits for the answer, which the host journals
//! so that a replay gets the same one without asking again.

use serde_json::{Value, json};

use crate::bindings::agentenv::environment::client as host;

/// Why a request got no result: the client's JSON-RPC error, or the host's (`-32601`: no MCP
/// client is calling, or it did not declare the capability; `-32001`: no answer in time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientError {
    /// The JSON-RPC error code.
    pub code: i32,
    /// The message.
    pub message: String,
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ClientError {}

/// Sends `method` with `params` (a JSON object) to the calling client; answers its result.
///
/// # Errors
/// [`ClientError`].
pub fn request(method: &str, params: &Value) -> Result<Value, ClientError> {
    let answer = host::request(method, &params.to_string()).map_err(|e| ClientError {
        code: e.code,
        message: e.message,
    })?;
    serde_json::from_str(&answer).map_err(|e| ClientError {
        code: -32603,
        message: format!("the client's result is not JSON: {e}"),
    })
}

/// Asks the client's model to answer `prompt` (one user message, at most `max_tokens`): the
/// `sampling/createMessage` result, `{"role", "content", "model", "stopReason"?}`.
///
/// # Errors
/// [`ClientError`].
pub fn sample(prompt: &str, max_tokens: u32) -> Result<Value, ClientError> {
    let message = json!({"role": "user", "content": {"type": "text", "text": prompt}});
    request(
        "sampling/createMessage",
        &json!({"messages": [message], "maxTokens": max_tokens}),
    )
}

/// Asks the client's user for values shaped by `schema` (a flat JSON Schema object): the
/// `elicitation/create` result, `{"action": "accept" | "decline" | "cancel", "content"?}`.
///
/// # Errors
/// [`ClientError`].
pub fn elicit(message: &str, schema: &Value) -> Result<Value, ClientError> {
    request(
        "elicitation/create",
        &json!({"message": message, "requestedSchema": schema}),
    )
}
