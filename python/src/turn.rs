//! `envhost.Turn`: an agent's turn, its events an iterator of dicts (docs/python.md#agents).

use std::sync::{Arc, Mutex, PoisonError};

use envhost::agent::{AgentEvent, AgentEvents, Collected};
use envhost::protocol::CodedError;
use futures::StreamExt as _;
use pyo3::prelude::*;
use serde_json::json;

use crate::convert::to_python;
use crate::errors;
use crate::host::Shared;

/// A running turn. Iterate it for its events (docs/agents.md#turns), the last exactly one
/// `completed` or `failed`; `collect()` waits for the end instead. Dropping it cancels the turn.
#[pyclass(name = "Turn", module = "envhost", frozen)]
pub struct PyTurn {
    shared: Arc<Shared>,
    events: Mutex<Option<AgentEvents>>,
}

impl PyTurn {
    pub(crate) fn new(shared: Arc<Shared>, events: AgentEvents) -> Self {
        Self {
            shared,
            events: Mutex::new(Some(events)),
        }
    }

    /// The next event, waited for with the GIL released; None after the terminal.
    fn next_event(&self, py: Python<'_>) -> Option<AgentEvent> {
        py.detach(|| {
            let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
            let stream = events.as_mut()?;
            let event = self.shared.runtime.block_on(stream.next());
            if event.as_ref().is_none_or(AgentEvent::is_terminal) {
                *events = None;
            }
            event
        })
    }
}

#[pymethods]
impl PyTurn {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.next_event(py)
            .map(|event| to_python(py, &event.to_json()))
            .transpose()
    }

    /// Waits for the turn's end (the GIL released): `{"text": the text deltas joined, "data":
    /// completed's data}`. Raises `EnvhostError` with a `failed` terminal's code (`turn_failed`
    /// when it has none), details and `retryable`; a turn already read to its end raises
    /// `turn_ended`.
    fn collect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let events = self
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(events) = events else {
            let ended = CodedError::new("turn_ended", "the turn's events were read to their end");
            return Err(errors::coded(py, &ended));
        };
        match py.detach(|| self.shared.runtime.block_on(events.collect())) {
            Ok(Collected { text, data }) => to_python(py, &json!({"text": text, "data": data})),
            Err(failure) => {
                let code = failure.code.unwrap_or_else(|| "turn_failed".to_owned());
                let mut error = CodedError::new(code, failure.details);
                error.retryable = failure.retryable;
                error.status = 500;
                Err(errors::coded(py, &error))
            }
        }
    }
}
