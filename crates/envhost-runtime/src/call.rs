//! The tool or extension call an episode is serving, as its guest's `context.current()` reports
//! it (protocol.md#callers).

use envhost_protocol::Caller;

/// The tool or extension call being served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallContext {
    /// Who is calling.
    pub caller: Caller,
    /// The tool's name as served; for an extension, `<uri>#<op>`.
    pub tool: String,
    /// The arguments as received, as JSON text.
    pub arguments: String,
    /// 32 lowercase hex digits, fresh per call.
    pub call_id: String,
}

impl CallContext {
    /// A context with a fresh call id.
    pub fn new(caller: Caller, tool: String, arguments: String) -> Self {
        let mut call_id = [0; uuid::fmt::Simple::LENGTH];
        Self {
            caller,
            tool,
            arguments,
            call_id: uuid::Uuid::new_v4()
                .simple()
                .encode_lower(&mut call_id)
                .to_owned(),
        }
    }
}

/// Why a request to the caller got no result (the WIT `client.request-error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientError {
    /// The JSON-RPC error code: the client's, or envhost's (`-32601` no such client or
    /// capability, `-32001` no answer in time).
    pub code: i32,
    /// The message.
    pub message: String,
}

/// What a request to the caller answered: its result object as JSON text, or its error.
pub type Exchange = Result<String, ClientError>;

/// A request to the caller, to be answered.
pub type Asked = std::pin::Pin<Box<dyn std::future::Future<Output = Exchange> + Send>>;

/// The caller of a tool call as its guest may reach it while the call runs: progress reports,
/// log records and requests (protocol.md#progress, protocol.md#logging,
/// protocol.md#client-requests). A served MCP request's stream is one; a replayed call has
/// none, so nothing is sent twice and requests are answered from the journal.
pub trait Peer: Send + Sync {
    /// Sends request `method` with `params` (a JSON object as text) to the caller.
    fn request(&self, method: String, params: String) -> Asked;

    /// The guest reported `progress` out of `total` (none when unknown), with a message.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>);

    /// The guest wrote a log record at `level` (`fields`: a JSON object as text, when given).
    fn log(&self, level: tracing::Level, message: &str, fields: Option<&str>);

    /// Whether the caller cancelled the call (MCP's `notifications/cancelled`): the guest is
    /// then stopped at its next epoch tick, and the episode rebuilt to its state before the
    /// call. Never, by default.
    fn cancelled(&self) -> bool {
        false
    }
}
