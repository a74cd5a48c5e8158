//! [`EnvError`]: a coded answer to the caller.

use crate::bindings::agentenv::environment::types;

/// Whether a failed call's effect happened (protocol.md#coded-errors).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Applied {
    /// The effect happened.
    Yes,
    /// Nothing happened (the default).
    #[default]
    No,
    /// The effect may have happened.
    Unknown,
}

/// A coded error, the reference SDK's `AgentEnvError`: return it to answer with a code rather
/// than a crash.
///
/// From a tool it becomes an `isError` result with the text `"<code>: <message>"` and the
/// structured content `{code, message, retryable, applied, hint?}`; from an extension, HTTP
/// `status` with the body `{"ok": false, "error": {...}}`; from a data-plane handler, JSON-RPC
/// error -32000.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvError {
    /// Machine-readable code, e.g. `channel_not_found`.
    pub code: String,
    /// Human-readable message.
    pub message: String,
    /// Whether the caller may retry the same call (default `false`).
    pub retryable: bool,
    /// Whether the call's effect happened (default [`Applied::No`]).
    pub applied: Applied,
    /// A hint for the caller.
    pub hint: Option<String>,
    /// HTTP status of an extension answer (default 400).
    pub status: u16,
}

impl EnvError {
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

    /// Sets `retryable`.
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// Sets `applied`.
    pub fn applied(mut self, applied: Applied) -> Self {
        self.applied = applied;
        self
    }

    /// Sets the hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the HTTP status of an extension answer.
    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}

impl std::fmt::Display for EnvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for EnvError {}

impl From<EnvError> for types::EnvError {
    fn from(e: EnvError) -> Self {
        types::EnvError {
            code: e.code,
            message: e.message,
            retryable: e.retryable,
            applied: match e.applied {
                Applied::Yes => types::Applied::Yes,
                Applied::No => types::Applied::No,
                Applied::Unknown => types::Applied::Unknown,
            },
            hint: e.hint,
            status: e.status,
        }
    }
}
