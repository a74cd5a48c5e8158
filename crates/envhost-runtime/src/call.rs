//! The tool or extension call an episode is serving, as its guest's `context.current()` reports
//! it (protocol.md#callers).

use std::pin::Pin;
use std::sync::Arc;

use envhost_protocol::Caller;
use serde::{Deserialize, Serialize};

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
pub type Asked = Pin<Box<dyn Future<Output = Exchange> + Send>>;

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

    /// Where the call may upload its export: the object store of the `write_namespace` grant
    /// its caller sent with `data/get` (protocol.md#exports). None, by default.
    fn namespace(&self) -> Option<Arc<dyn Namespace>> {
        None
    }
}

/// The limits of a `write_namespace` grant (the WIT `upload.namespace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamespaceLimits {
    /// The most distinct paths that may be uploaded.
    pub max_objects: u64,
    /// The most bytes of one object.
    pub max_object_bytes: u64,
    /// The most bytes of all objects together, the latest of each path counted.
    pub max_total_bytes: u64,
}

/// A failed upload (the WIT `upload.transfer-error`), with the reference's transfer code and
/// message (protocol.md#transfer-errors).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct TransferFailure {
    /// `invalid_transfer`, `grant_expired`, `transfer_too_large`, `transfer_rejected`,
    /// `transfer_unavailable` or `transfer_timeout`.
    pub code: String,
    /// What went wrong, never naming the grant's URL.
    pub message: String,
    /// Whether another try may succeed.
    pub retryable: bool,
}

impl TransferFailure {
    /// A failure that another try cannot mend.
    pub fn new(code: &str, message: &str) -> Self {
        Self {
            code: code.to_owned(),
            message: message.to_owned(),
            retryable: false,
        }
    }
}

/// What an upload stored (the WIT `upload.uploaded`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stored {
    /// Its size in bytes.
    pub size_bytes: u64,
    /// Its SHA-256, 64 lowercase hex digits.
    pub sha256: String,
}

/// An upload under way.
pub type Finishing = Pin<Box<dyn Future<Output = Result<Stored, TransferFailure>> + Send>>;

/// The object store a `data/get` may upload its export to (protocol.md#exports). The `upload`
/// capability checks every path and limit before it calls here; this keeps the bytes of the
/// object begun (out of memory) and uploads them.
pub trait Namespace: Send + Sync {
    /// The grant's limits.
    fn limits(&self) -> NamespaceLimits;

    /// Starts the object at `path` (relative to the grant's root, already checked), dropping
    /// one begun and not finished.
    fn begin(&self, path: &str);

    /// Appends `bytes` to the object begun. A failure to keep them is reported by
    /// [`Namespace::finish`].
    fn write(&self, bytes: &[u8]);

    /// Drops the object begun.
    fn abandon(&self);

    /// Uploads the object begun.
    fn finish(&self) -> Finishing;
}
