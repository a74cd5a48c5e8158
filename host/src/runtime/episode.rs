//! An episode: one live instance of an environment, called one call at a time.

use std::sync::Arc;

use super::bindings::ToolResult;
use super::bindings::agentenv::environment::types as wit;
use super::convert;
use super::determinism::Seed;
use super::environment::Environment;
use super::error::{CallError, ReplayError};
use super::image::{Image, ImageError};
use super::journal::{Answer, Journal, Op};
use super::runner::{Maker, Runner};
use super::threads::GuestThreads;
use crate::protocol::error::CodedError;
use crate::protocol::part::Part;
use crate::protocol::role::Caller;

/// The tool or extension call being served, as the guest's `context.current()` reports it.
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

/// One live instance of an environment. Calls are serialised (one at a time, first come first
/// served, each on its caller's task as long as its guest answers within an epoch tick; a caller
/// that goes away never cancels a guest mid-call) and journaled;
/// a call whose guest faults is answered with the fault and the instance rebuilt from the
/// journal to its state before the call.
pub struct Episode {
    runner: Runner,
}

impl Episode {
    /// Instantiates `environment` for a new episode with a fresh seed, labelled `label` in the
    /// log, whose calls run on `threads`.
    ///
    /// # Errors
    /// [`CallError::Instantiate`] when instantiation fails.
    pub async fn new(
        environment: Arc<Environment>,
        label: String,
        threads: &GuestThreads,
    ) -> Result<Self, CallError> {
        let maker = Maker::new(environment, label, Seed::fresh());
        let (live, start) = maker.start().await?;
        let journal = Journal::new(start);
        Ok(Self {
            runner: Runner::new(maker, live, journal, threads),
        })
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
        Ok(Self {
            runner: Runner::new(maker, live, journal, threads),
        })
    }

    /// An episode of `environment` with `seed` at the end of `journal`, instantiated from
    /// `image` (made by [`Episode::image`] from the same environment, seed and journal): one
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
        let live = maker.start_from(image).await?;
        Ok(Self {
            runner: Runner::new(maker, live, journal, threads),
        })
    }

    /// A pre-initialised image of `environment` with `seed` at the end of `journal`, for
    /// [`Episode::from_image`]: the journal is replayed (every call checked) into an
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

    /// The environment this is an episode of.
    pub fn environment(&self) -> &Arc<Environment> {
        self.runner.environment()
    }

    /// The seed of the episode's WASI random.
    pub fn seed(&self) -> Seed {
        self.runner.seed()
    }

    /// The journal, as of every call made before this one.
    ///
    /// # Errors
    /// [`CallError::Busy`] when the queue is full, [`CallError::Stopped`].
    pub async fn journal(&self) -> Result<Journal, CallError> {
        self.runner.journal().await
    }

    /// `data/reset`: the episode continues on a fresh instance whose `reset` answered.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed (the episode then stays as it was).
    pub async fn reset(&self) -> Result<(), CallError> {
        self.runner.call(Op::Reset, None).await.map(drop)
    }

    /// `data/add` of parts whose files the host already resolved to bytes.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn add_data(&self, parts: Vec<wit::Part>) -> Result<(), CallError> {
        self.runner.call(Op::AddData(parts), None).await.map(drop)
    }

    /// `data/get`.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed, or `invalid_part` when it answers a data part that is
    /// not a JSON object.
    pub async fn get_data(&self) -> Result<Vec<Part>, CallError> {
        let Answer::Parts(parts) = self.runner.call(Op::GetData, None).await? else {
            return Err(unexpected());
        };
        parts
            .into_iter()
            .map(convert::part_from_guest)
            .collect::<Result<_, _>>()
            .map_err(|m| CallError::Guest(CodedError::new("invalid_part", m)))
    }

    /// Calls the tool the guest declared as `declared_name` with `arguments` (a JSON object as
    /// text, already validated), on behalf of `context`.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn call_tool(
        &self,
        declared_name: &str,
        arguments: String,
        context: CallContext,
    ) -> Result<ToolResult, CallError> {
        let op = Op::CallTool {
            name: declared_name.to_owned(),
            arguments,
        };
        match self.runner.call(op, Some(context)).await? {
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
        match self.runner.call(op, Some(context)).await? {
            Answer::Json(json) => Ok(json),
            _ => Err(unexpected()),
        }
    }
}

/// An answer of another kind than the op's (the runner pairs them, so this cannot happen).
fn unexpected() -> CallError {
    CallError::Guest(CodedError::new(
        "internal_error",
        "the runtime answered an operation with an answer of another kind",
    ))
}
