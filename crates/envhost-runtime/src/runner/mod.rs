//! The runtime side of an episode: one live instance of an environment, its calls run one at a
//! time, each on its caller's task as far as it can, and journaled.
//!
//! The instance and its journal ([`replayable`]) sit behind a lock that calls take in turn,
//! first come first served. A call that finds the lock free runs its guest on the caller's own
//! task; one that answers within its first poll (the usual case) costs no hand-over to another
//! task, no channel and no timer. One that does not (its guest computes past a tick, or awaits
//! the host) moves in that same poll to a task of its own ([`crate::threads`]), so a caller that
//! goes away (a client that disconnects) never cancels a guest mid-call: the call finishes, its
//! answer is dropped. At most `max_queued_calls` calls wait for the lock; beyond, a call is
//! refused at once. A caller waits at most the call timeout, queueing included; a call that has
//! not started by then never runs.
//!
//! Every call that answers (with a value or a coded error) is appended to the journal. A call
//! whose guest faults is not: the instance is discarded and rebuilt at once by replaying the
//! journal, so the episode is back at its state just before the failing call. `data/reset`
//! starts the episode on a fresh instance (and a fresh journal) whose `reset` is called.

pub(crate) mod counted;
mod image;
mod maker;
mod replayable;

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use envhost_protocol::Part;
use envhost_protocol::error::CodedError;
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio::time::Instant;

pub use image::{Image, ImageError};

use crate::bindings::ToolResult;
use crate::bindings::agentenv::environment::types as wit;
use crate::call::{CallContext, Peer};
use crate::capability::serving::Descriptions;
use crate::capability::wasi::Seed;
use crate::convert;
use crate::environment::Environment;
use crate::error::{CallError, ReplayError};
use crate::journal::{Answer, Journal, Op};
use crate::threads::{GuestThreads, Placement, Started};
use counted::Counted;
use maker::Maker;
use replayable::Replayable;

/// The runtime side of one episode: a live instance of an environment whose calls are
/// serialised (one at a time, first come first served, each on its caller's task as long as its
/// guest answers within an epoch tick; a caller that goes away never cancels a guest mid-call)
/// and journaled; a call whose guest faults is answered with the fault and the instance rebuilt
/// from the journal to its state before the call.
pub struct Runner {
    environment: Arc<Environment>,
    seed: Seed,
    /// The tool descriptions the episode's guest changed, shared with its instances.
    descriptions: Descriptions,
    replayable: Arc<Mutex<Replayable>>,
    /// Calls waiting for the lock or holding it.
    admitted: AtomicUsize,
    placement: Placement,
}

impl Runner {
    /// Instantiates `environment` for a new episode with a fresh seed, labelled `label` in the
    /// log, whose calls run on `threads`.
    ///
    /// # Errors
    /// [`CallError::Instantiate`] when instantiation fails.
    pub async fn start(
        environment: Arc<Environment>,
        label: String,
        threads: &GuestThreads,
    ) -> Result<Self, CallError> {
        let maker = Maker::new(environment, label, Seed::fresh());
        let (live, start) = maker.start().await?;
        let journal = Journal::new(start);
        Ok(Self::new(Replayable::new(maker, live, journal), threads))
    }

    /// An episode of `environment` with `seed`, brought to the end of `journal` by replaying
    /// it (every call checked against its recorded answer), labelled `label` in the log.
    ///
    /// # Errors
    /// [`CallError::Replay`] naming the first entry that diverged.
    pub async fn restore(
        environment: Arc<Environment>,
        label: String,
        threads: &GuestThreads,
        seed: Seed,
        journal: Journal,
    ) -> Result<Self, CallError> {
        let maker = Maker::new(environment, label, seed);
        let live = maker.replay(&journal).await.map_err(CallError::Replay)?;
        Ok(Self::new(Replayable::new(maker, live, journal), threads))
    }

    /// An episode of `environment` with `seed` at the end of `journal`, instantiated from
    /// `image` (made by [`Runner::image`] from the same environment, seed and journal): one
    /// instantiation, whatever the journal's length.
    ///
    /// # Errors
    /// [`CallError::Instantiate`]; [`CallError::Replay`] when the image does not stand at the
    /// journal's end.
    pub async fn from_image(
        environment: Arc<Environment>,
        label: String,
        threads: &GuestThreads,
        seed: Seed,
        journal: Journal,
        image: &Image,
    ) -> Result<Self, CallError> {
        if image.entries() != journal.len() {
            return Err(CallError::Replay(ReplayError::Instantiate(format!(
                "the image stands after {} journal entries, the journal has {}",
                image.entries(),
                journal.len()
            ))));
        }
        let maker = Maker::new(environment, label, seed);
        maker.descriptions.extend(image.descriptions());
        let live = maker.start_from(image.ready(), image.monotonic()).await?;
        Ok(Self::new(Replayable::new(maker, live, journal), threads))
    }

    /// A pre-initialised image of `environment` with `seed` at the end of `journal`, for
    /// [`Runner::from_image`]: the journal is replayed (every call checked) into an
    /// instrumented instance whose state is then compiled as a component of its own
    /// (milliseconds to seconds, as compiling the environment).
    ///
    /// # Errors
    /// [`ImageError`].
    pub async fn image(
        environment: Arc<Environment>,
        seed: Seed,
        journal: &Journal,
    ) -> Result<Image, ImageError> {
        let maker = Maker::new(environment, "image".into(), seed);
        Image::build(&maker, journal).await
    }

    /// The runner of `replayable`; calls that outlast their first poll move to `threads`.
    fn new(replayable: Replayable, threads: &GuestThreads) -> Self {
        Self {
            environment: replayable.environment().clone(),
            seed: replayable.seed(),
            descriptions: replayable.descriptions(),
            replayable: Arc::new(Mutex::new(replayable)),
            admitted: AtomicUsize::new(0),
            placement: threads.placement(),
        }
    }

    /// The environment this is an episode of.
    pub fn environment(&self) -> &Arc<Environment> {
        &self.environment
    }

    /// The tool descriptions the episode's guest changed (protocol.md#tool-updates), by
    /// declared name; none when it changed none.
    pub fn changed_descriptions(&self) -> Option<std::collections::BTreeMap<String, String>> {
        self.descriptions.changed()
    }

    /// The seed of the episode's WASI random.
    pub fn seed(&self) -> Seed {
        self.seed
    }

    /// The journal, as of every call that took the lock before this one.
    ///
    /// # Errors
    /// [`CallError::Busy`] when the queue is full, [`CallError::Timeout`].
    pub async fn journal(&self) -> Result<Journal, CallError> {
        let _admitted = self.admit()?;
        let (mut replayable, _) = self.lock().await?;
        Ok(replayable.share_journal())
    }

    /// `data/reset`: the episode continues on a fresh instance whose `reset` answered.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed (the episode then stays as it was).
    pub async fn reset(&self) -> Result<(), CallError> {
        self.call(Op::Reset, None, None).await.map(drop)
    }

    /// `data/add` of parts whose files the host already resolved to bytes.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn add_data(&self, parts: Vec<wit::Part>) -> Result<(), CallError> {
        self.call(Op::AddData(parts), None, None).await.map(drop)
    }

    /// `data/get`.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed, or `invalid_part` when it answers a data part that is
    /// not a JSON object.
    pub async fn get_data(&self) -> Result<Vec<Part>, CallError> {
        self.get_data_through(None).await
    }

    /// `data/get`, whose guest may upload its export to the [`Namespace`](crate::Namespace) of
    /// `peer` (protocol.md#exports).
    ///
    /// # Errors
    /// As [`Runner::get_data`].
    pub async fn get_data_through(
        &self,
        peer: Option<Arc<dyn Peer>>,
    ) -> Result<Vec<Part>, CallError> {
        let Answer::Parts(parts) = self.call(Op::GetData, None, peer).await? else {
            return Err(unexpected());
        };
        parts
            .into_iter()
            .map(convert::part_from_guest)
            .collect::<Result<_, _>>()
            .map_err(|m| CallError::Guest(CodedError::new("invalid_part", m)))
    }

    /// Calls the tool the guest declared as `declared_name` with `arguments` (a JSON object as
    /// text, already validated), on behalf of `context`; the guest's progress reports and log
    /// records meanwhile also go to `peer`.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn call_tool(
        &self,
        declared_name: &str,
        arguments: String,
        context: CallContext,
        peer: Option<Arc<dyn Peer>>,
    ) -> Result<ToolResult, CallError> {
        let op = Op::CallTool {
            name: declared_name.to_owned(),
            arguments,
        };
        match self.call(op, Some(context), peer).await? {
            Answer::Tool(result) => Ok(result),
            _ => Err(unexpected()),
        }
    }

    /// Calls method `op` of extension `uri` with `request` (a JSON object as text, already
    /// bound and coerced); answers JSON text.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn call_extension(
        &self,
        uri: &str,
        op: &str,
        request: String,
        context: CallContext,
    ) -> Result<String, CallError> {
        let op = Op::CallExtension {
            uri: uri.to_owned(),
            op: op.to_owned(),
            request,
        };
        match self.call(op, Some(context), None).await? {
            Answer::Json(json) => Ok(json),
            _ => Err(unexpected()),
        }
    }

    /// Answers MCP request `method` with `params` (a JSON object as text): the guest's result
    /// object as JSON text, unchecked (protocol.md#resources-and-prompts).
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn call_mcp(&self, method: &str, params: String) -> Result<String, CallError> {
        let op = Op::CallMcp {
            method: method.to_owned(),
            params,
        };
        match self.call(op, None, None).await? {
            Answer::Json(json) => Ok(json),
            _ => Err(unexpected()),
        }
    }

    /// Runs `op` (with `context` for the `context` import) after the calls before it, waiting
    /// at most the call timeout; refuses it when `max_queued_calls` calls wait already.
    async fn call(
        &self,
        op: Op,
        context: Option<CallContext>,
        peer: Option<Arc<dyn Peer>>,
    ) -> Result<Answer, CallError> {
        let _admitted = self.admit()?;
        let (mut replayable, deadline) = self.lock().await?;
        let call = Box::pin(async move { replayable.run(op, context, peer).await });
        match self.placement.start(call).await {
            Started::Done(answer) => answer,
            Started::Moved(answer) => {
                let timeout = self.environment.limits().call_timeout;
                let deadline = deadline.unwrap_or_else(|| Instant::now() + timeout);
                match tokio::time::timeout_at(deadline, answer).await {
                    Ok(answer) => answer.unwrap_or(Err(CallError::Stopped)),
                    Err(_) => Err(CallError::Timeout(timeout)),
                }
            }
        }
    }

    /// Admits one more call, unless `max_queued_calls` wait already besides the one running.
    fn admit(&self) -> Result<Counted<'_>, CallError> {
        let queued = self.environment.limits().max_queued_calls.max(1);
        let (admitted, before) = Counted::start(&self.admitted);
        if before > queued {
            return Err(CallError::Busy { queued });
        }
        Ok(admitted)
    }

    /// The instance and journal, at once when no call holds them or waits for them; otherwise
    /// after the calls before, until the call timeout, which is then returned as the caller's
    /// deadline.
    async fn lock(&self) -> Result<(OwnedMutexGuard<Replayable>, Option<Instant>), CallError> {
        if let Ok(replayable) = self.replayable.clone().try_lock_owned() {
            return Ok((replayable, None));
        }
        let timeout = self.environment.limits().call_timeout;
        let deadline = Instant::now() + timeout;
        match tokio::time::timeout_at(deadline, self.replayable.clone().lock_owned()).await {
            Ok(replayable) => Ok((replayable, Some(deadline))),
            Err(_) => Err(CallError::Timeout(timeout)),
        }
    }
}

/// An answer of another kind than the op's (ops and answers are paired, so this cannot
/// happen).
fn unexpected() -> CallError {
    CallError::Guest(CodedError::new(
        "internal_error",
        "the runtime answered an operation with an answer of another kind",
    ))
}
