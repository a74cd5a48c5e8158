//! `envhost.Episode` and `envhost.Snapshot`: one isolated instance of an environment and the
//! protocol's operations on it, in-process (docs/python.md#episode).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use envhost::Episode;
use envhost::protocol::Caller;
use envhost::protocol::role::normalize_role;
use envhost::protocol::tool_access::Change;
use envhost::server::mcp::listing;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use serde_json::Value;

use crate::convert::{from_json_text, to_object, to_parts, to_python, to_python_via_text};
use crate::errors;
use crate::host::Shared;
use crate::results::PyToolResult;

/// One episode: its own instance, data, tool-access rules. Calls into one episode run one at a
/// time; episodes run concurrently, each call on its caller's thread with the GIL released.
/// After `close()` (or leaving its `with` block) every call raises `episode_not_found`; an
/// episode no Python object refers to any more is closed by itself.
#[pyclass(name = "Episode", module = "envhost", frozen)]
pub struct PyEpisode {
    shared: Arc<Shared>,
    episode: Arc<Episode>,
    closed: AtomicBool,
}

impl PyEpisode {
    pub(crate) fn new(shared: Arc<Shared>, episode: Arc<Episode>) -> Self {
        Self {
            shared,
            episode,
            closed: AtomicBool::new(false),
        }
    }

    pub(crate) fn id(&self) -> &str {
        self.episode.id()
    }

    /// The episode, unless it was closed.
    pub(crate) fn open(&self, py: Python<'_>) -> PyResult<&Arc<Episode>> {
        if self.closed.load(Ordering::Acquire) {
            let mut error = envhost::protocol::CodedError::new(
                "episode_not_found",
                format!("episode {} is closed", self.episode.id()),
            );
            error.status = 404;
            return Err(errors::coded(py, &error));
        }
        Ok(&self.episode)
    }
}

impl PyEpisode {
    /// A tool-access change of `role`'s `tools`, read as the HTTP body would be.
    fn change_tools<'py>(
        &self,
        py: Python<'py>,
        role: &Bound<'py, PyAny>,
        tools: &Bound<'py, PyAny>,
        disabled: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let episode = self.open(py)?;
        let body = serde_json::json!({
            "role": crate::convert::to_json(role, "role")?,
            "tools": crate::convert::to_json(tools, "tools")?,
        });
        let change =
            Change::parse(body.to_string().as_bytes()).map_err(|e| errors::coded(py, &e))?;
        to_python(py, &episode.change_tool_access(&change, disabled))
    }
}

impl Drop for PyEpisode {
    /// An episode whose last Python reference goes is closed: nothing else can reach it.
    fn drop(&mut self) {
        self.close();
    }
}

/// A caller of `role` (None, `""` and `"default"` are the default role) in `session`.
pub(crate) fn caller(role: Option<String>, session: Option<String>) -> Caller {
    Caller {
        role: normalize_role(role.map(Value::String).as_ref()),
        session,
    }
}

#[pymethods]
impl PyEpisode {
    /// The episode's id (32 hex digits).
    #[getter(id)]
    fn py_id(&self) -> &str {
        self.episode.id()
    }

    /// The name of its environment in the host.
    #[getter]
    fn environment(&self) -> &str {
        &self.episode.catalog().name
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The environment's card (protocol.md#card), as a dict.
    fn card<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.open(py)?;
        let card = std::str::from_utf8(&self.episode.catalog().card)
            .map_err(|e| errors::invalid_params(py, e.to_string()))?;
        from_json_text(py, card)
    }

    /// `data/reset` (protocol.md#reset). Raises `EnvhostError` `reset_failed` or `busy`.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        let episode = self.open(py)?;
        py.detach(|| self.shared.runtime.block_on(episode.reset()))
            .map_err(|e| errors::data(py, "reset", e))
    }

    /// `data/add` (protocol.md#add-data) of `parts`, a list of part dicts (`{"kind": "data",
    /// "data": {...}}`, `{"kind": "text", "text": ...}`, `{"kind": "file", "file": {"uri": ...}}`),
    /// file parts fetched first under the host's data roots and egress policy. Raises
    /// `EnvhostError` `invalid_params`, `add_failed` (nothing handed over when a file cannot be
    /// fetched) or `busy`.
    fn add(&self, py: Python<'_>, parts: &Bound<'_, PyAny>) -> PyResult<()> {
        let episode = self.open(py)?;
        let parts = to_parts(parts)?;
        py.detach(|| self.shared.runtime.block_on(episode.add_data(parts)))
            .map_err(|e| errors::data(py, "add", e))
    }

    /// `data/get` (protocol.md#get-data): the episode's data as a list of part dicts. Raises
    /// `EnvhostError` `get_failed` or `busy`.
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let episode = self.open(py)?;
        let parts = py
            .detach(|| self.shared.runtime.block_on(episode.get_data()))
            .map_err(|e| errors::data(py, "get", e))?;
        to_python_via_text(py, &parts)
    }

    /// The tools `role` may call, as MCP's `tools/list` gives them (dicts with `name`,
    /// `description`, `inputSchema`, and `outputSchema`, `annotations`, `_meta` when set), in
    /// card order (protocol.md#tool-access-over-mcp). `envhost.tools.openai(...)` and
    /// `envhost.tools.anthropic(...)` turn them into those APIs' tool definitions.
    #[pyo3(signature = (role = None))]
    fn list_tools<'py>(
        &self,
        py: Python<'py>,
        role: Option<String>,
    ) -> PyResult<Bound<'py, PyList>> {
        let episode = self.open(py)?;
        let caller = caller(role, None);
        let tools = episode.tools(&caller);
        let listed = PyList::empty(py);
        for tool in tools {
            listed.append(to_python(py, &listing::entry(&tool.tool))?)?;
        }
        Ok(listed)
    }

    /// Calls tool `name` with `arguments` (a dict) as `role` in `session`: a `ToolResult`, an
    /// error result (`is_error`) for an unknown tool, a refusal by tool access, arguments that
    /// fail the schema, or the environment's own error (protocol.md#tool-results). Raises only
    /// for arguments that are not a dict of JSON values, or a closed episode.
    #[pyo3(signature = (name, arguments = None, *, role = None, session = None))]
    fn call_tool(
        &self,
        py: Python<'_>,
        name: &str,
        arguments: Option<&Bound<'_, PyAny>>,
        role: Option<String>,
        session: Option<String>,
    ) -> PyResult<PyToolResult> {
        let episode = self.open(py)?;
        let arguments = to_object(arguments, "arguments")?;
        let caller = caller(role, session);
        let result = py.detach(|| {
            self.shared
                .runtime
                .block_on(episode.call_tool(name, arguments, caller))
        });
        Ok(PyToolResult::new(result))
    }

    /// Calls method `method` of extension `uri` (as the card's `params.methods` names it) with
    /// `params` (a dict) as `role`: its answer, as JSON values (protocol.md#extension-calls).
    /// Raises `EnvhostError`: `extension_not_found`, `invalid_params`, the environment's own
    /// codes, `busy`, `extension_failed`.
    #[pyo3(signature = (uri, method, params = None, *, role = None))]
    fn call_extension<'py>(
        &self,
        py: Python<'py>,
        uri: &str,
        method: &str,
        params: Option<&Bound<'_, PyAny>>,
        role: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let episode = self.open(py)?;
        let Some(route) = episode.catalog().extension_route(uri, method) else {
            let mut error = envhost::protocol::CodedError::new(
                "extension_not_found",
                format!(
                    "environment {} serves no method {method:?} of extension {uri:?}",
                    episode.catalog().name
                ),
            );
            error.status = 404;
            return Err(errors::coded(py, &error));
        };
        let params = to_object(params, "params")?;
        let answer = py
            .detach(|| {
                self.shared.runtime.block_on(episode.call_extension(
                    route,
                    params,
                    caller(role, None),
                ))
            })
            .map_err(|e| errors::coded(py, &e))?;
        to_python(py, &answer)
    }

    /// Lets `role` (`"*"` for every role) call `tools` (a list of tool names, or `"*"`), hidden-
    /// by-default tools included, as `POST /tools/enable` does (protocol.md#rule-changes):
    /// answers the rules now stored for the role, `{"role", "disabled", "allowed"}`. Raises
    /// `EnvhostError` `invalid_params` as the reference words it.
    fn enable_tools<'py>(
        &self,
        py: Python<'py>,
        role: &Bound<'py, PyAny>,
        tools: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.change_tools(py, role, tools, false)
    }

    /// Keeps `role` (`"*"` for every role) from listing and calling `tools` (a list of tool
    /// names, or `"*"`), as `POST /tools/disable` does: answers the rules now stored for the
    /// role. Raises `EnvhostError` `invalid_params` as the reference words it.
    fn disable_tools<'py>(
        &self,
        py: Python<'py>,
        role: &Bound<'py, PyAny>,
        tools: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.change_tools(py, role, tools, true)
    }

    /// A snapshot of the episode as of every call made before this one (docs/snapshots.md):
    /// restore it with `host.restore(snapshot)`, any number of times; `bytes(snapshot)` is
    /// portable to any host serving the same component. Raises `EnvhostError` `busy`,
    /// `too_many_snapshots`.
    fn snapshot(&self, py: Python<'_>) -> PyResult<PySnapshot> {
        let episode = self.open(py)?;
        let id = py
            .detach(|| {
                self.shared
                    .runtime
                    .block_on(self.shared.host.snapshot(episode))
            })
            .map_err(|e| errors::snapshot(py, &e))?;
        Ok(PySnapshot::new(self.shared.clone(), id))
    }

    /// A new episode in this one's state, going its own way (by replay). Raises `EnvhostError`
    /// as `snapshot()` and `host.restore()` do.
    fn fork(&self, py: Python<'_>) -> PyResult<PyEpisode> {
        let episode = self.open(py)?;
        let (snapshot, forked) = py
            .detach(|| self.shared.runtime.block_on(self.shared.host.fork(episode)))
            .map_err(|e| errors::snapshot(py, &e))?;
        self.shared.host.delete_snapshot(&snapshot);
        Ok(PyEpisode::new(self.shared.clone(), forked))
    }

    /// Drops the episode (its instance goes back to the pool once a call still running ends);
    /// closing twice does nothing.
    fn close(&self) {
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.shared.host.drop_episode(self.episode.id());
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
            "<envhost.Episode {} of {}{}>",
            self.episode.id(),
            self.episode.catalog().name,
            if self.closed() { ", closed" } else { "" }
        )
    }
}

/// A snapshot kept by its host until this object is dropped: `host.restore(snapshot)` makes an
/// episode of it (after the first, from a pre-initialised image); `bytes(snapshot)` is its
/// portable file (docs/snapshots.md).
#[pyclass(name = "Snapshot", module = "envhost", frozen)]
pub struct PySnapshot {
    shared: Arc<Shared>,
    id: String,
}

impl PySnapshot {
    pub(crate) fn new(shared: Arc<Shared>, id: String) -> Self {
        Self { shared, id }
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Whether the snapshot is kept by `shared`'s host.
    pub(crate) fn is_of(&self, shared: &Arc<Shared>) -> bool {
        Arc::ptr_eq(&self.shared, shared)
    }

    /// The snapshot's portable file; none once its host no longer keeps it.
    pub(crate) fn file(&self) -> Option<Vec<u8>> {
        self.shared
            .host
            .snapshot_by_id(&self.id)
            .map(|s| s.to_file())
    }
}

#[pymethods]
impl PySnapshot {
    /// The snapshot's id in its host.
    #[getter(id)]
    fn py_id(&self) -> &str {
        &self.id
    }

    /// The environment it is of.
    #[getter]
    fn environment(&self) -> Option<String> {
        self.shared
            .host
            .snapshot_by_id(&self.id)
            .map(|s| s.environment.clone())
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let snapshot = self.shared.host.snapshot_by_id(&self.id).ok_or_else(|| {
            errors::snapshot(py, &envhost::SnapshotError::Unknown(self.id.clone()))
        })?;
        Ok(PyBytes::new(py, &snapshot.to_file()))
    }

    fn __repr__(&self) -> String {
        format!("<envhost.Snapshot {}>", self.id)
    }
}

impl Drop for PySnapshot {
    fn drop(&mut self) {
        self.shared.host.delete_snapshot(&self.id);
    }
}
