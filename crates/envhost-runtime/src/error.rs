//! Errors at the runtime's boundary.

use std::time::Duration;

use wasmtime::Trap;
use wasmtime_wasi::I32Exit;

use crate::limits::MemoryExhausted;
use crate::world::CompileError;
use envhost_protocol::description::DescriptionError;
use envhost_protocol::error::{Applied, CodedError};

/// Why an environment could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// wasmtime refused the engine configuration or the linker.
    #[error("wasmtime: {0}")]
    Engine(String),
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The bytes are not a component, or it does not target `agentenv:environment`.
    #[error("{0}")]
    Compile(#[from] CompileError),
    /// The component imports what no environment is given.
    #[error("the environment cannot be linked: {0}")]
    Link(String),
    /// Instantiating the component, or its `describe()`, failed.
    #[error("the environment failed to start: {0}")]
    Start(String),
    /// The description cannot be served.
    #[error("the environment's description is invalid: {0}")]
    Description(#[from] DescriptionError),
}

impl LoadError {
    pub(crate) fn engine(e: impl std::fmt::Display) -> Self {
        Self::Engine(format!("{e:#}"))
    }
}

/// How a guest failed a call without answering it. The episode's instance is discarded and the
/// episode rebuilt from its journal to its state just before the call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// The call ran past its CPU deadline.
    #[error("the environment ran past its CPU deadline of {0:?}")]
    Deadline(Duration),
    /// The guest grew its memory past the cap.
    #[error("the environment ran out of memory ({0})")]
    OutOfMemory(String),
    /// The guest trapped (a panic, `unreachable`, an out-of-bounds access...): the trap, then
    /// the last line the guest wrote to stderr, when it wrote one (a panic's message, an
    /// exception's type and text).
    #[error("the environment trapped: {0}")]
    Trap(String),
    /// The caller cancelled the call, which was stopped.
    #[error("the caller cancelled the call")]
    Cancelled,
}

impl Fault {
    /// Classifies the error a guest call failed with; `said` is the last line the guest wrote
    /// to stderr, which a trap's message carries.
    pub(crate) fn classify(
        error: &wasmtime::Error,
        deadline: Duration,
        said: Option<String>,
    ) -> Self {
        if let Some(m) = error.downcast_ref::<MemoryExhausted>() {
            return Self::OutOfMemory(m.to_string());
        }
        let trap = match (
            error.downcast_ref::<Trap>(),
            error.downcast_ref::<I32Exit>(),
        ) {
            (Some(Trap::Interrupt), _) => return Self::Deadline(deadline),
            (Some(trap), _) => trap.to_string(),
            (None, Some(I32Exit(status))) => format!("it exited with status {status}"),
            (None, None) => error.root_cause().to_string(),
        };
        match said {
            Some(line) => Self::Trap(format!("{trap}, after writing to stderr: {line}")),
            None => Self::Trap(trap),
        }
    }

    /// The coded error a caller gets: `deadline_exceeded`, `out_of_memory`, `guest_trapped` or
    /// `cancelled`, applied `no` (the episode is rebuilt to its state before the call).
    pub fn to_coded(&self) -> CodedError {
        let code = match self {
            Self::Deadline(_) => "deadline_exceeded",
            Self::OutOfMemory(_) => "out_of_memory",
            Self::Trap(_) => "guest_trapped",
            Self::Cancelled => "cancelled",
        };
        CodedError {
            code: code.into(),
            message: format!("{self}; the episode was rebuilt to its state before this call"),
            retryable: false,
            applied: Applied::No,
            hint: None,
            status: 500,
        }
    }
}

/// Why a call into an episode failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The guest answered with a coded error.
    #[error(transparent)]
    Guest(CodedError),
    /// The guest failed without answering.
    #[error(transparent)]
    Fault(Fault),
    /// A fresh instance could not be made.
    #[error("the environment could not be instantiated: {0}")]
    Instantiate(String),
    /// Rebuilding the episode from its journal failed.
    #[error(transparent)]
    Replay(ReplayError),
    /// The episode stopped before answering (the task running the call ended without an answer).
    #[error("the episode stopped before answering")]
    Stopped,
    /// The episode's queue is full: nothing was run.
    #[error("the episode is busy: {queued} calls are already waiting")]
    Busy {
        /// The calls waiting.
        queued: usize,
    },
    /// No answer within the call timeout (a call that started still runs to its end; one still
    /// waiting for its turn never runs).
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

impl CallError {
    /// The coded error a caller gets.
    pub fn to_coded(&self) -> CodedError {
        match self {
            Self::Guest(e) => e.clone(),
            Self::Fault(f) => f.to_coded(),
            Self::Busy { .. } => CodedError {
                code: "busy".into(),
                message: self.to_string(),
                retryable: true,
                applied: Applied::No,
                hint: Some("retry after a moment".into()),
                status: 429,
            },
            Self::Timeout(_) => CodedError {
                code: "timeout".into(),
                message: self.to_string(),
                retryable: false,
                applied: Applied::Unknown,
                hint: None,
                status: 504,
            },
            Self::Replay(e) => CodedError {
                code: "replay_diverged".into(),
                message: e.to_string(),
                retryable: false,
                applied: Applied::No,
                hint: None,
                status: 500,
            },
            Self::Instantiate(_) | Self::Stopped => CodedError {
                code: "unavailable".into(),
                message: self.to_string(),
                retryable: true,
                applied: Applied::No,
                hint: None,
                status: 503,
            },
        }
    }
}

/// Why an episode could not be rebuilt from a journal.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// A fresh instance could not be made.
    #[error("the environment could not be instantiated for replay: {0}")]
    Instantiate(String),
    /// Instantiating read the clocks differently than recorded.
    #[error("replay diverged while instantiating: the clock readings differ from the journal's")]
    Start,
    /// Call `index` (from 0) of the journal answered differently, read the clocks differently,
    /// or faulted.
    #[error("replay diverged at journal entry {index} ({op}): {what}")]
    Diverged {
        /// The entry, from 0.
        index: usize,
        /// The call, as `tool call <name>`, `data/add`, ....
        op: String,
        /// What differed.
        what: String,
    },
}
