//! A turn's events as its caller reads them (docs/agents.md#turns), and `collect`, the buffered
//! answer (docs/agents.md#collect).

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use serde_json::Value;
use tokio::sync::mpsc;

use super::events::AgentEvent;

/// The events of one turn, in order, ending with exactly one terminal (`completed` or
/// `failed`). Dropping it before the terminal cancels the turn: its instance is dropped at its
/// next import call or epoch tick, its model request closed, and no terminal is made.
pub struct AgentEvents {
    events: mpsc::Receiver<AgentEvent>,
}

/// What a completed turn answered: its `text` deltas joined, and `completed`'s data.
#[derive(Clone, Debug, PartialEq)]
pub struct Collected {
    /// The text deltas, joined; `thinking` and every other event are left out.
    pub text: String,
    /// The `completed` terminal's data.
    pub data: Option<Value>,
}

/// A turn's `failed` terminal, or a turn that ended without one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{details}")]
pub struct AgentFailure {
    /// What went wrong.
    pub details: String,
    /// Whether trying again may succeed.
    pub retryable: bool,
    /// Its code (`session_busy`, `agent_trap`, `deadline_exceeded`, the guest's own...).
    pub code: Option<String>,
}

impl AgentEvents {
    pub(crate) fn new(events: mpsc::Receiver<AgentEvent>) -> Self {
        Self { events }
    }

    /// A turn that ended before it began, with `terminal`.
    pub(crate) fn one(terminal: AgentEvent) -> Self {
        let (sender, events) = mpsc::channel(1);
        let _ = sender.try_send(terminal);
        Self { events }
    }

    /// The next event; `None` after the terminal, or when the turn ended without one.
    pub async fn recv(&mut self) -> Option<AgentEvent> {
        self.events.recv().await
    }

    /// Reads the turn to its end, as fastagent's `collect`: the text and `completed`'s data.
    ///
    /// # Errors
    /// The `failed` terminal as an [`AgentFailure`]; a turn that ended without a terminal is
    /// `{details: "the turn ended without a terminal", retryable: true, code: None}`.
    pub async fn collect(mut self) -> Result<Collected, AgentFailure> {
        let mut text = String::new();
        while let Some(event) = self.recv().await {
            match event {
                AgentEvent::Text(delta) => text.push_str(&delta),
                AgentEvent::Completed { data } => return Ok(Collected { text, data }),
                AgentEvent::Failed {
                    details,
                    retryable,
                    code,
                } => {
                    return Err(AgentFailure {
                        details,
                        retryable,
                        code,
                    });
                }
                _ => {}
            }
        }
        Err(AgentFailure {
            details: "the turn ended without a terminal".into(),
            retryable: true,
            code: None,
        })
    }
}

impl Stream for AgentEvents {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.events.poll_recv(cx)
    }
}
