//! `envhost.Computer` and `envhost.ComputerSnapshot`: one computer of a driver and the
//! `computer/v1` contract's operations on it, in-process (docs/python.md#computers).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use envhost::ComputerEpisode;
use envhost::protocol::tool_access::Change;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use serde_json::Value;

use crate::convert::{to_json, to_object, to_python, to_python_via_text};
use crate::episode::caller;
use crate::errors;
use crate::host::Shared;
use crate::results::PyToolResult;

/// One computer: its own driver instance, frames, input queue, settings and tool-access rules.
/// Its calls run on the caller's thread with the GIL released; input operations run one at a
/// time, in the order they come. After `close()` (or leaving its `with` block) every call
/// raises `episode_not_found`; a computer no Python object refers to any more is closed by
/// itself.
#[pyclass(name = "Computer", module = "envhost", frozen)]
pub struct PyComputer {
    shared: Arc<Shared>,
    computer: Arc<ComputerEpisode>,
    closed: AtomicBool,
}

impl PyComputer {
    pub(crate) fn new(shared: Arc<Shared>, computer: Arc<ComputerEpisode>) -> Self {
        Self {
            shared,
            computer,
            closed: AtomicBool::new(false),
        }
    }

    /// The computer, unless it was closed.
    fn open(&self, py: Python<'_>) -> PyResult<&Arc<ComputerEpisode>> {
        if self.closed.load(Ordering::Acquire) {
            let mut error = envhost::protocol::CodedError::new(
                "episode_not_found",
                format!("computer {} is closed", self.computer.id()),
            );
            error.status = 404;
            return Err(errors::coded(py, &error));
        }
        Ok(&self.computer)
    }

    /// A tool-access change of `role`'s `tools`, read as the HTTP body would be.
    fn change_tools<'py>(
        &self,
        py: Python<'py>,
        role: &Bound<'py, PyAny>,
        tools: &Bound<'py, PyAny>,
        disabled: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let computer = self.open(py)?;
        let body = serde_json::json!({
            "role": to_json(role, "role")?,
            "tools": to_json(tools, "tools")?,
        });
        let change =
            Change::parse(body.to_string().as_bytes()).map_err(|e| errors::coded(py, &e))?;
        to_python(py, &computer.change_tool_access(&change, disabled))
    }
}

impl Drop for PyComputer {
    /// A computer whose last Python reference goes is closed: nothing else can reach it.
    fn drop(&mut self) {
        self.close();
    }
}

#[pymethods]
impl PyComputer {
    /// The computer's id (32 hex digits).
    #[getter]
    fn id(&self) -> &str {
        self.computer.id()
    }

    /// The name of its driver in the host.
    #[getter]
    fn driver(&self) -> &str {
        &self.computer.catalog().name
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The card (docs/computer.md#serving) as a dict: its extensions (display, spaces, ready,
    /// `computer/v1` with the driver's features, ...), its tools and operations.
    fn card<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.open(py)?.card())
    }

    /// The tools `role` may call, as MCP's `tools/list` gives them (dicts with `name`,
    /// `description`, `inputSchema`, `outputSchema`, `annotations`), the reference's, in its
    /// order.
    #[pyo3(signature = (role = None))]
    fn list_tools<'py>(
        &self,
        py: Python<'py>,
        role: Option<String>,
    ) -> PyResult<Bound<'py, PyList>> {
        let computer = self.open(py)?;
        let listed = PyList::empty(py);
        for tool in computer.list_tools(&caller(role, None)) {
            listed.append(to_python(py, &tool)?)?;
        }
        Ok(listed)
    }

    /// Calls tool `name` (`computer_screenshot`, `computer_click`, ...) with `arguments` (a
    /// dict) as `role`: a `ToolResult` (a screenshot's PNG is its image block, base64), an
    /// error result (`is_error`) for an unknown tool, a refusal by tool access, arguments the
    /// contract refuses or the driver's error (docs/computer.md#tools). Raises only for
    /// arguments that are not a dict of JSON values, or a closed computer.
    #[pyo3(signature = (name, arguments = None, *, role = None, session = None))]
    fn call_tool(
        &self,
        py: Python<'_>,
        name: &str,
        arguments: Option<&Bound<'_, PyAny>>,
        role: Option<String>,
        session: Option<String>,
    ) -> PyResult<PyToolResult> {
        let computer = self.open(py)?;
        let arguments = to_object(arguments, "arguments")?;
        let caller = caller(role, session);
        let result = py.detach(|| {
            self.shared
                .runtime
                .block_on(computer.call_tool(name, arguments, &caller))
        });
        Ok(PyToolResult::new(result))
    }

    /// A capture of the whole display now, as PNG bytes at its native size (the display's
    /// width and height times its scale); it is kept as no frame. Raises `EnvhostError` with
    /// the driver's code.
    fn screenshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let computer = self.open(py)?;
        let png = py
            .detach(|| self.shared.runtime.block_on(computer.screenshot()))
            .map_err(|e| errors::coded(py, &e))?;
        Ok(PyBytes::new(py, &png))
    }

    /// Starts the computer afresh: a new instance of its driver (no frames, no keys held),
    /// with the settings and tool access it has now. Raises `EnvhostError` `reset_failed`
    /// for a driver granted a display.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        let computer = self.open(py)?;
        py.detach(|| self.shared.runtime.block_on(computer.reset()))
            .map_err(|e| errors::data(py, "reset", e))
    }

    /// `data/add` of `parts` (docs/computer.md#data): `{"kind": "data", "data": {...}}` parts
    /// seed the driver's own state (the desk's widgets), file parts naming their path under
    /// `urn:agentenv:data-objects/v1` are written under the granted home. Every part is checked
    /// before any is applied. Raises `EnvhostError` `add_failed`.
    fn add(&self, py: Python<'_>, parts: &Bound<'_, PyAny>) -> PyResult<()> {
        let computer = self.open(py)?;
        let Value::Array(parts) = to_json(parts, "parts")? else {
            return Err(errors::invalid_params(py, "parts must be a list"));
        };
        py.detach(|| self.shared.runtime.block_on(computer.add_data(&parts)))
            .map_err(|e| errors::data(py, "add", e))
    }

    /// `data/get`: the driver's state as a `{"kind": "data", "data"}` part when it keeps one,
    /// then the files of the settings' data paths under the home. Raises `EnvhostError`
    /// `get_failed`.
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let computer = self.open(py)?;
        let parts = py
            .detach(|| self.shared.runtime.block_on(computer.get_data()))
            .map_err(|e| errors::data(py, "get", e))?;
        to_python_via_text(py, &parts)
    }

    /// Calls method `method` of extension `uri` with `params` (a dict), as its route over HTTP
    /// does: `urn:agentenv:computer-ready/v1` `status`, `computer-display/v1` `get`/`set`,
    /// `computer-spaces/v1` `get`/`set`, `computer-keyboard/v1` `get`/`set`,
    /// `computer-exec/v1` `run` (when granted). Answers its JSON answer. Raises `EnvhostError`
    /// `extension_not_found`, `invalid_params`, `invalid_argument`, `unsupported`, ...
    #[pyo3(signature = (uri, method, params = None))]
    fn call_extension<'py>(
        &self,
        py: Python<'py>,
        uri: &str,
        method: &str,
        params: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let computer = self.open(py)?;
        let params = to_object(params, "params")?;
        let answer = py
            .detach(|| {
                self.shared
                    .runtime
                    .block_on(computer.call_extension(uri, method, &params))
            })
            .map_err(|e| errors::coded(py, &e))?;
        to_python(py, &answer)
    }

    /// Lets `role` (`"*"` for every role) call `tools` (a list of names, or `"*"`), as `POST
    /// /tools/enable` does: answers the rules now stored for the role.
    fn enable_tools<'py>(
        &self,
        py: Python<'py>,
        role: &Bound<'py, PyAny>,
        tools: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.change_tools(py, role, tools, false)
    }

    /// Keeps `role` (`"*"` for every role) from listing and calling `tools`, as `POST
    /// /tools/disable` does: answers the rules now stored for the role.
    fn disable_tools<'py>(
        &self,
        py: Python<'py>,
        role: &Bound<'py, PyAny>,
        tools: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.change_tools(py, role, tools, true)
    }

    /// The computer's state now (its input journal, seed, settings, held keys), kept in
    /// memory by the host until the `ComputerSnapshot` is dropped: `host.restore(snapshot)`
    /// makes a computer of it, any number of times. Raises `EnvhostError` `fork_unsupported`
    /// (a driver granted a display), `too_many_snapshots`.
    fn snapshot(&self, py: Python<'_>) -> PyResult<PyComputerSnapshot> {
        let computer = self.open(py)?;
        let kept = py
            .detach(|| {
                self.shared
                    .runtime
                    .block_on(self.shared.host.snapshot_computer(computer))
            })
            .map_err(|e| errors::computer(py, &e))?;
        Ok(PyComputerSnapshot::new(
            self.shared.clone(),
            kept.id().to_owned(),
            kept.inputs(),
        ))
    }

    /// A new computer in this one's state, going its own way: its input replayed into a fresh
    /// instance, so it draws the same pixels. Raises `EnvhostError` `fork_unsupported`,
    /// `fork_failed`, `too_many_episodes`.
    fn fork(&self, py: Python<'_>) -> PyResult<PyComputer> {
        let computer = self.open(py)?;
        let forked = py
            .detach(|| {
                self.shared
                    .runtime
                    .block_on(self.shared.host.fork_computer(computer))
            })
            .map_err(|e| errors::computer(py, &e))?;
        Ok(PyComputer::new(self.shared.clone(), forked))
    }

    /// Drops the computer (its instance goes once an operation still running ends); closing
    /// twice does nothing.
    fn close(&self) {
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.shared.host.drop_computer(self.computer.id());
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) {
        self.close();
    }

    fn __repr__(&self) -> String {
        format!(
            "<envhost.Computer {} of {}{}>",
            self.computer.id(),
            self.computer.catalog().name,
            if self.closed() { ", closed" } else { "" }
        )
    }
}

/// A computer's state kept in memory by its host until this object is dropped:
/// `host.restore(snapshot)` makes a computer of it.
#[pyclass(name = "ComputerSnapshot", module = "envhost", frozen)]
pub struct PyComputerSnapshot {
    shared: Arc<Shared>,
    id: String,
    inputs: usize,
}

impl PyComputerSnapshot {
    fn new(shared: Arc<Shared>, id: String, inputs: usize) -> Self {
        Self { shared, id, inputs }
    }

    /// A new computer in the snapshot's state, in `shared`'s host, which must be the host
    /// that keeps it.
    pub(crate) fn restore(&self, py: Python<'_>, shared: &Arc<Shared>) -> PyResult<PyComputer> {
        if !Arc::ptr_eq(&self.shared, shared) {
            return Err(errors::invalid_params(
                py,
                "a computer's snapshot is kept in memory: restore it with the host that took it",
            ));
        }
        let restored = py
            .detach(|| {
                shared
                    .runtime
                    .block_on(shared.host.restore_computer(&self.id))
            })
            .map_err(|e| errors::computer(py, &e))?;
        Ok(PyComputer::new(shared.clone(), restored))
    }
}

#[pymethods]
impl PyComputerSnapshot {
    /// The snapshot's id in its host.
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }

    /// How many input operations a restore replays.
    #[getter]
    fn inputs(&self) -> usize {
        self.inputs
    }

    fn __repr__(&self) -> String {
        format!("<envhost.ComputerSnapshot {}>", self.id)
    }
}

impl Drop for PyComputerSnapshot {
    fn drop(&mut self) {
        self.shared.host.delete_computer_snapshot(&self.id);
    }
}
