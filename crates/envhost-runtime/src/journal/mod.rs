//! An episode's journal: every call into its guest since it started (or since its last
//! `data/reset`, which starts it on a fresh instance), with what the call needs to run again
//! exactly (inputs, caller context, clock readings) and a digest of what it answered, so that a
//! replay can check it gets the same answers.

mod codec;
mod digest;
mod op;

use std::sync::Arc;

pub use digest::AnswerHash;
pub use op::{Answer, AnswerDigest, Entry, Op, Outcome};

use crate::bindings::agentenv::environment::types as wit;
use crate::call::{CallContext, Exchange};
use crate::capability::wasi::Reading;

/// The calls since an instance started, and the clock readings it made while starting. Entries
/// are kept in compact append-only buffers (the `codec` module's encoding, about 100 bytes for a
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
    /// The hash of the answers' digests.
    hash: AnswerHash,
}

impl Journal {
    /// An empty journal of an instance that made `start` readings while starting, digesting
    /// answers with [`AnswerHash::default`].
    pub fn new(start: Vec<Reading>) -> Self {
        Self::with_hash(start, AnswerHash::default())
    }

    /// [`Journal::new`] digesting answers with `hash` (a journal read from a file keeps the
    /// file's hash: its entries were digested with it).
    pub fn with_hash(start: Vec<Reading>, hash: AnswerHash) -> Self {
        Self {
            start,
            frozen: Vec::new(),
            log: Vec::new(),
            len: 0,
            hash,
        }
    }

    /// The hash the journal digests answers with.
    pub fn hash(&self) -> AnswerHash {
        self.hash
    }

    /// The digest of `answer`, as the journal records it and a replay checks it.
    pub fn digest(&self, answer: &Result<Answer, wit::EnvError>) -> AnswerDigest {
        digest::digest(self.hash, answer)
    }

    /// Appends a call, with what its caller answered the guest's requests.
    pub fn push(
        &mut self,
        op: &Op,
        context: Option<&CallContext>,
        readings: &[Reading],
        answer: &AnswerDigest,
        exchanges: &[Exchange],
    ) {
        codec::encode(&mut self.log, op, context, readings, answer, exchanges);
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
            codec::decode(&mut rest).ok_or(index)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let answer = Journal::default().digest(&Ok(Answer::Done));
        journal.push(&call(0), None, &[], &answer, &[]);
        journal.push(&call(1), None, &[Reading::Wall(7)], &answer, &[]);
        let mut first = journal.share();
        journal.push(&call(2), None, &[], &answer, &[]);
        let second = journal.share();
        assert_eq!(
            journal.share().share().len(),
            3,
            "sharing twice adds nothing"
        );
        first.push(&call(9), None, &[], &answer, &[]);
        assert_eq!(names(&second), ["tool 0", "tool 1", "tool 2"]);
        assert_eq!(names(&first), ["tool 0", "tool 1", "tool 9"]);
        assert_eq!(
            second.entries().nth(1).unwrap().unwrap().readings,
            [Reading::Wall(7)]
        );
        assert_eq!(second.start, [Reading::Monotonic(1)]);
    }
}
