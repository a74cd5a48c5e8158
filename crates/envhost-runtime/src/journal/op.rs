//! What a journal entry holds: one call into the guest's `env` interface with its inputs
//! ([`Op`]), what the guest answered ([`Answer`]), and the entry as decoded ([`Entry`]).

use wasmtime::Store;

use crate::bindings::ToolResult;
use crate::bindings::agentenv::environment::types as wit;
use crate::bindings::exports::agentenv::environment::env::Guest;
use crate::call::CallContext;
use crate::capability::wasi::Reading;
use crate::store::StoreData;

/// One call into the guest's `env` interface, with its inputs: what a journal entry replays.
#[derive(Clone, Debug)]
pub enum Op {
    /// `reset`.
    Reset,
    /// `add-data` with parts whose files the host already resolved to bytes.
    AddData(Vec<wit::Part>),
    /// `get-data`. Journaled like the others: a guest may change state it keeps for itself on a
    /// read (Rust's `HashMap` draws new keys each time one is made), and replay must be exact.
    GetData,
    /// `call-tool` of the declared name with JSON arguments.
    CallTool {
        /// The tool's declared name.
        name: String,
        /// A JSON object, as text.
        arguments: String,
    },
    /// `call-extension`.
    CallExtension {
        /// The extension's URI.
        uri: String,
        /// The method.
        op: String,
        /// A JSON object, as text.
        request: String,
    },
    /// `call-mcp`: an MCP request beyond tools.
    CallMcp {
        /// The MCP method, e.g. `resources/read`.
        method: String,
        /// Its params object, as text.
        params: String,
    },
}

/// What the guest answered an [`Op`].
#[derive(Debug)]
pub enum Answer {
    /// `reset` and `add-data`.
    Done,
    /// `get-data`.
    Parts(Vec<wit::Part>),
    /// `call-tool`.
    Tool(ToolResult),
    /// `call-extension` and `call-mcp`: JSON text.
    Json(String),
}

/// A guest's answer to an op: the outer error is a fault, the inner one its coded error.
pub type Outcome = wasmtime::Result<Result<Answer, wit::EnvError>>;

impl Op {
    /// Runs the op on the instance in `store`.
    pub(crate) async fn run(&self, guest: &Guest, store: &mut Store<StoreData>) -> Outcome {
        Ok(match self {
            Self::Reset => guest.call_reset(store).await?.map(|()| Answer::Done),
            Self::AddData(parts) => guest
                .call_add_data(store, parts)
                .await?
                .map(|()| Answer::Done),
            Self::GetData => guest.call_get_data(store).await?.map(Answer::Parts),
            Self::CallTool { name, arguments } => guest
                .call_call_tool(store, name, arguments)
                .await?
                .map(Answer::Tool),
            Self::CallExtension { uri, op, request } => guest
                .call_call_extension(store, uri, op, request)
                .await?
                .map(Answer::Json),
            Self::CallMcp { method, params } => guest
                .call_call_mcp(store, method, params)
                .await?
                .map(Answer::Json),
        })
    }

    /// The JSON arguments of a tool call or the request of an extension call.
    pub(crate) fn arguments(&self) -> Option<&str> {
        match self {
            Self::CallTool { arguments, .. } => Some(arguments),
            Self::CallExtension { request, .. } => Some(request),
            _ => None,
        }
    }

    /// A short description for errors: `call_tool slack_send_message`, `data/add`, ....
    pub fn describe(&self) -> String {
        match self {
            Self::Reset => "data/reset".into(),
            Self::AddData(_) => "data/add".into(),
            Self::GetData => "data/get".into(),
            Self::CallTool { name, .. } => format!("tool call {name}"),
            Self::CallExtension { uri, op, .. } => format!("extension call {uri} {op}"),
            Self::CallMcp { method, .. } => format!("MCP {method}"),
        }
    }
}

/// The hash ([`super::AnswerHash`]: BLAKE3, or SHA-256 in a journal read from a version-2
/// snapshot file) of a guest's answer in envhost's canonical encoding: strings and byte lists as a
/// little-endian `u64` length then the bytes, options as `0` or `1` then the value, booleans and
/// tags as one byte, `u16` little-endian; an `Ok` answer is tag `0` then its value, an
/// `env-error` tag `1` then its fields in WIT order.
pub type AnswerDigest = [u8; 32];

/// One journaled call, as decoded from a [`Journal`].
#[derive(Clone, Debug)]
pub struct Entry {
    /// The call.
    pub op: Op,
    /// What the `context` import answered during it.
    pub context: Option<CallContext>,
    /// The clock readings the guest made during it, in order.
    pub readings: Vec<Reading>,
    /// The digest of its answer.
    pub answer: AnswerDigest,
    /// What the caller answered the guest's requests during it, in order.
    pub exchanges: Vec<crate::call::Exchange>,
}
