//! An episode's journal: every call into its guest since it started (or since its last
//! `data/reset`, which starts it on a fresh instance), with what the call needs to run again
//! exactly (inputs, caller context, clock readings) and a digest of what it answered, so that a
//! replay can check it gets the same answers.

use std::sync::Arc;

use sha2::{Digest as _, Sha256};
use wasmtime::Store;

use super::bindings::ToolResult;
use super::bindings::agentenv::environment::types as wit;
use super::bindings::exports::agentenv::environment::env::{ContentBlock, Guest};
use super::determinism::Reading;
use super::episode::CallContext;
use super::journal_codec::Encoder;
use super::state::EpisodeState;

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
    /// `call-extension`: JSON text.
    Json(String),
}

/// A guest's answer to an op: the outer error is a fault, the inner one its coded error.
pub type Outcome = wasmtime::Result<Result<Answer, wit::EnvError>>;

impl Op {
    /// Runs the op on the instance in `store`.
    pub(crate) async fn run(&self, guest: &Guest, store: &mut Store<EpisodeState>) -> Outcome {
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
        }
    }
}

/// SHA-256 of a guest's answer in envhost's canonical encoding: strings and byte lists as a
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
}

/// The calls since an instance started, and the clock readings it made while starting. Entries
/// are kept in compact append-only buffers (`journal_codec`'s encoding, about 100 bytes for a
/// small tool call, nothing allocated per entry) and decoded only to replay or export them. The
/// entries up to the last [`Journal::share`] are frozen in buffers its copies share, so copying
/// a shared journal (a snapshot's, for every restore) costs the same whatever its length.
#[derive(Clone, Debug, Default)]
pub struct Journal {
    /// Readings made while instantiating.
    pub start: Vec<Reading>,
    /// Entries frozen by [`Journal::share`], oldest first; no entry spans two buffers.
    frozen: Vec<Arc<[u8]>>,
    /// Entries since.
    log: Vec<u8>,
    len: usize,
}

impl Journal {
    /// An empty journal of an instance that made `start` readings while starting.
    pub fn new(start: Vec<Reading>) -> Self {
        Self {
            start,
            frozen: Vec::new(),
            log: Vec::new(),
            len: 0,
        }
    }

    /// Appends a call.
    pub fn push(
        &mut self,
        op: &Op,
        context: Option<&CallContext>,
        readings: &[Reading],
        answer: &AnswerDigest,
    ) {
        super::journal_codec::encode(&mut self.log, op, context, readings, answer);
        self.len += 1;
    }

    /// A copy of the journal that shares its entries with this one: both go on appending on
    /// their own.
    pub fn share(&mut self) -> Self {
        if !self.log.is_empty() {
            self.frozen.push(Arc::from(std::mem::take(&mut self.log)));
        }
        self.clone()
    }

    /// The calls journaled.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no call is journaled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The calls, oldest first, decoded; `Err` with the index of the first one that cannot be
    /// decoded (a journal envhost wrote always decodes).
    pub fn entries(&self) -> impl Iterator<Item = Result<Entry, usize>> + '_ {
        let mut buffers = self
            .frozen
            .iter()
            .map(|buffer| &buffer[..])
            .chain(std::iter::once(self.log.as_slice()));
        let mut rest: &[u8] = &[];
        (0..self.len).map(move |index| {
            while rest.is_empty() {
                match buffers.next() {
                    Some(buffer) => rest = buffer,
                    None => break,
                }
            }
            super::journal_codec::decode(&mut rest).ok_or(index)
        })
    }
}

/// The digest of `answer` (see [`AnswerDigest`]).
pub fn digest(answer: &Result<Answer, wit::EnvError>) -> AnswerDigest {
    let mut out = Canonical(Sha256::new());
    match answer {
        Ok(answer) => {
            out.u8(0);
            match answer {
                Answer::Done => out.u8(0),
                Answer::Parts(parts) => {
                    out.u8(1);
                    out.len(parts.len());
                    parts.iter().for_each(|p| out.part(p));
                }
                Answer::Tool(result) => {
                    out.u8(2);
                    out.tool_result(result);
                }
                Answer::Json(json) => {
                    out.u8(3);
                    out.str(json);
                }
            }
        }
        Err(error) => {
            out.u8(1);
            out.str(&error.code);
            out.str(&error.message);
            out.u8(u8::from(error.retryable));
            out.u8(error.applied as u8);
            out.opt(error.hint.as_deref());
            out.raw(&error.status.to_le_bytes());
        }
    }
    out.0.finalize().into()
}

struct Canonical(Sha256);

impl Encoder for Canonical {
    fn raw(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn len(&mut self, len: usize) {
        self.0.update((len as u64).to_le_bytes());
    }
}

impl Canonical {
    fn tool_result(&mut self, result: &ToolResult) {
        self.len(result.content.len());
        for block in &result.content {
            match block {
                ContentBlock::Text(text) => {
                    self.u8(0);
                    self.str(text);
                }
                ContentBlock::Image(image) => {
                    self.u8(1);
                    self.bytes(&image.data);
                    self.str(&image.mime_type);
                }
            }
        }
        self.opt(result.structured_content.as_deref());
        self.u8(u8::from(result.is_error));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(message: &str) -> wit::EnvError {
        wit::EnvError {
            code: "x".into(),
            message: message.into(),
            retryable: false,
            applied: wit::Applied::No,
            hint: None,
            status: 400,
        }
    }

    #[test]
    fn digests_tell_answers_apart() {
        let text = |t: &str| {
            Ok(Answer::Tool(ToolResult {
                content: vec![ContentBlock::Text(t.into())],
                structured_content: None,
                is_error: false,
            }))
        };
        assert_eq!(digest(&text("a")), digest(&text("a")));
        assert_ne!(digest(&text("a")), digest(&text("b")));
        assert_ne!(
            digest(&Ok(Answer::Json("{}".into()))),
            digest(&Ok(Answer::Done))
        );
        assert_ne!(digest(&Err(error("a"))), digest(&Err(error("b"))));
        assert_ne!(
            digest(&Ok(Answer::Parts(vec![]))),
            digest(&Ok(Answer::Parts(vec![wit::Part::Text(wit::TextPart {
                text: String::new(),
                metadata: None,
            })])))
        );
    }

    #[test]
    fn shared_journals_keep_every_entry_in_order_and_go_their_own_way() {
        let call = |i: usize| Op::CallTool {
            name: format!("tool {i}"),
            arguments: "{}".into(),
        };
        let names = |journal: &Journal| -> Vec<String> {
            journal
                .entries()
                .map(|e| match e.unwrap().op {
                    Op::CallTool { name, .. } => name,
                    other => other.describe(),
                })
                .collect()
        };
        let mut journal = Journal::new(vec![Reading::Monotonic(1)]);
        let answer = digest(&Ok(Answer::Done));
        journal.push(&call(0), None, &[], &answer);
        journal.push(&call(1), None, &[Reading::Wall(7)], &answer);
        let mut first = journal.share();
        journal.push(&call(2), None, &[], &answer);
        let second = journal.share();
        assert_eq!(
            journal.share().share().len(),
            3,
            "sharing twice adds nothing"
        );
        first.push(&call(9), None, &[], &answer);
        assert_eq!(names(&second), ["tool 0", "tool 1", "tool 2"]);
        assert_eq!(names(&first), ["tool 0", "tool 1", "tool 9"]);
        assert_eq!(
            second.entries().nth(1).unwrap().unwrap().readings,
            [Reading::Wall(7)]
        );
        assert_eq!(second.start, [Reading::Monotonic(1)]);
    }
}
