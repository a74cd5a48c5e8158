//! Coded errors (`AgentEnvError`, protocol.md#tool-results and protocol.md#coded-errors) and their
//! wire shapes.

use serde_json::{Map, Value, json};

/// Whether a failed call's effect happened (protocol.md#coded-errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// `"yes"`
    Yes,
    /// `"no"`
    No,
    /// `"unknown"`
    Unknown,
}

impl Applied {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::No => "no",
            Self::Unknown => "unknown",
        }
    }
}

/// A coded error answered to a caller.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CodedError {
    /// The code, e.g. `channel_not_found`.
    pub code: String,
    /// The message.
    pub message: String,
    /// Whether the caller may retry.
    pub retryable: bool,
    /// Whether the effect happened.
    pub applied: Applied,
    /// A hint, when any.
    pub hint: Option<String>,
    /// The HTTP status of an extension answer.
    pub status: u16,
}

/// `invalid_params`: a request that does not fit (400, protocol.md#coded-errors).
pub const INVALID_PARAMS: &str = "invalid_params";
/// `extension_failed`: an extension failed unexpectedly (500, applied unknown,
/// protocol.md#coded-errors).
pub const EXTENSION_FAILED: &str = "extension_failed";
/// `permission_denied`: a tool disabled for the caller's role (protocol.md#tool-access-over-mcp).
pub const PERMISSION_DENIED: &str = "permission_denied";

impl CodedError {
    /// A non-retryable error with nothing applied and status 400.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable: false,
            applied: Applied::No,
            hint: None,
            status: 400,
        }
    }

    /// `invalid_params` (400) with `message`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// The error object `{code, message, retryable, applied, hint?}`: an extension answer's
    /// `error` and a tool result's `structuredContent` (protocol.md#tool-results).
    pub fn to_object(&self) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert("code".into(), Value::String(self.code.clone()));
        out.insert("message".into(), Value::String(self.message.clone()));
        out.insert("retryable".into(), Value::Bool(self.retryable));
        out.insert(
            "applied".into(),
            Value::String(self.applied.as_str().into()),
        );
        if let Some(hint) = &self.hint {
            out.insert("hint".into(), Value::String(hint.clone()));
        }
        out
    }

    /// The extension error body `{"ok": false, "error": {...}}` (protocol.md#coded-errors).
    pub fn to_body(&self) -> Value {
        json!({"ok": false, "error": self.to_object()})
    }

    /// The text of the tool result's content block: `"<code>: <message>"`
    /// (protocol.md#tool-results).
    pub fn to_text(&self) -> String {
        self.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_reference() {
        let mut e = CodedError::new("not_found", "no such thing");
        assert_eq!(
            e.to_body(),
            json!({"ok": false, "error": {"code": "not_found", "message": "no such thing", "retryable": false, "applied": "no"}})
        );
        e.hint = Some("try again".into());
        e.retryable = true;
        assert_eq!(
            Value::Object(e.to_object()),
            json!({"code": "not_found", "message": "no such thing", "retryable": true, "applied": "no", "hint": "try again"})
        );
        assert_eq!(e.to_text(), "not_found: no such thing");
    }
}
