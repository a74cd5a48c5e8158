//! `envhost.ToolResult`: what a tool call answered, read into Python values as they are asked
//! for (docs/python.md#tool-results).

use envhost::protocol::error::Applied;
use envhost::protocol::{CodedError, Content, ToolResult};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::convert::{from_json_text, to_python};
use crate::errors;

/// A tool call's result (protocol.md#tool-results): `is_error`, `text`, `content`, `structured`,
/// `error`; `to_dict()` is MCP's `tools/call` result. It pickles as one JSON document of its
/// whole state (so it crosses processes, Ray's among them, without being read into dicts).
#[pyclass(name = "ToolResult", module = "envhost", frozen)]
pub struct PyToolResult {
    result: ToolResult,
}

impl PyToolResult {
    pub(crate) fn new(result: ToolResult) -> Self {
        Self { result }
    }
}

#[pymethods]
impl PyToolResult {
    /// Whether the call failed (MCP's `isError`).
    #[getter]
    fn is_error(&self) -> bool {
        self.result.is_error
    }

    /// The text blocks' texts, joined by newlines: what a model is shown.
    #[getter]
    fn text(&self) -> String {
        let texts: Vec<&str> = self
            .result
            .content
            .iter()
            .filter_map(|block| match block {
                Content::Text(text) => Some(text.as_str()),
                Content::Image { .. } | Content::Block(_) => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The content blocks: `{"type": "text", "text"}` and `{"type": "image", "data" (base64),
    /// "mimeType"}` dicts, and any other MCP block (audio, an embedded resource) as the
    /// environment wrote it, in order.
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let blocks = PyList::empty(py);
        for block in &self.result.content {
            let dict = PyDict::new(py);
            match block {
                Content::Block(json) => {
                    blocks.append(from_json_text(py, json.get())?)?;
                    continue;
                }
                Content::Text(text) => {
                    dict.set_item("type", "text")?;
                    dict.set_item("text", text)?;
                }
                Content::Image { data, mime_type } => {
                    dict.set_item("type", "image")?;
                    dict.set_item("data", data)?;
                    dict.set_item("mimeType", mime_type)?;
                }
            }
            blocks.append(dict)?;
        }
        Ok(blocks)
    }

    /// The structured content (a successful result's JSON, or a failed call's error object), as
    /// Python values; None when there is none.
    #[getter]
    fn structured<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(raw) = &self.result.structured_content else {
            return Ok(None);
        };
        from_json_text(py, raw.get()).map(Some)
    }

    /// A failed call's coded error, `{"code", "message", "retryable", "applied"}` and `"hint"`
    /// when it has one; None for a success or an uncoded failure (an unknown tool, arguments
    /// that fail the schema).
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.result
            .error
            .as_ref()
            .map(|e| to_python(py, &Value::Object(e.to_object())))
            .transpose()
    }

    /// MCP's `tools/call` result: `{"content", "structuredContent" (when any), "isError"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("content", self.content(py)?)?;
        if let Some(structured) = self.structured(py)? {
            dict.set_item("structuredContent", structured)?;
        }
        dict.set_item("isError", self.result.is_error)?;
        Ok(dict)
    }

    /// Raises the failed call's `EnvhostError` (`tool_failed` for an uncoded failure, its text
    /// the message); answers the result itself when it succeeded.
    fn raise_for_error(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let this = slf.get();
        if !this.result.is_error {
            return Ok(slf);
        }
        let py = slf.py();
        Err(match &this.result.error {
            Some(error) => errors::coded(py, error),
            None => errors::coded(
                py,
                &envhost::protocol::CodedError::new("tool_failed", this.text()),
            ),
        })
    }

    /// Pickling: [`from_state`]'s call on the result's state.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let constructor = py.import("envhost._envhost")?.getattr("_tool_result")?;
        let state = serde_json::to_vec(&State::of(&self.result))
            .map_err(|e| errors::invalid_params(py, format!("encoding a tool result: {e}")))?;
        Ok((constructor, PyTuple::new(py, [PyBytes::new(py, &state)])?))
    }

    fn __repr__(&self) -> String {
        let text = self.text();
        let shown: String = text.chars().take(80).collect();
        format!(
            "<envhost.ToolResult{} {shown:?}{}>",
            if self.result.is_error {
                " is_error"
            } else {
                ""
            },
            if shown.len() < text.len() { "…" } else { "" }
        )
    }
}

/// A [`ToolResult`]'s whole state, as `__reduce__` writes it: MCP's result fields, and the coded
/// error with its status.
#[derive(Serialize, Deserialize)]
struct State<'a> {
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(borrow)]
    structured: Option<&'a RawValue>,
    is_error: bool,
    error: Option<ErrorState>,
    #[serde(borrow, default)]
    meta: Option<&'a RawValue>,
}

/// A content block: text, an image's base64 data and media type, or another MCP block as JSON.
#[derive(Serialize, Deserialize)]
enum Block<'a> {
    Text(std::borrow::Cow<'a, str>),
    Image(std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>),
    #[serde(borrow)]
    Json(&'a RawValue),
}

#[derive(Serialize, Deserialize)]
struct ErrorState {
    code: String,
    message: String,
    retryable: bool,
    applied: String,
    hint: Option<String>,
    status: u16,
}

impl<'a> State<'a> {
    fn of(result: &'a ToolResult) -> Self {
        Self {
            content: result
                .content
                .iter()
                .map(|block| match block {
                    Content::Text(text) => Block::Text(text.into()),
                    Content::Image { data, mime_type } => {
                        Block::Image(data.into(), mime_type.into())
                    }
                    Content::Block(json) => Block::Json(json),
                })
                .collect(),
            structured: result.structured_content.as_deref(),
            meta: result.meta.as_deref(),
            is_error: result.is_error,
            error: result.error.as_ref().map(|e| ErrorState {
                code: e.code.clone(),
                message: e.message.clone(),
                retryable: e.retryable,
                applied: e.applied.as_str().to_owned(),
                hint: e.hint.clone(),
                status: e.status,
            }),
        }
    }

    fn into_result(self) -> ToolResult {
        ToolResult {
            content: self
                .content
                .into_iter()
                .map(|block| match block {
                    Block::Text(text) => Content::Text(text.into_owned()),
                    Block::Image(data, mime_type) => Content::Image {
                        data: data.into_owned(),
                        mime_type: mime_type.into_owned(),
                    },
                    Block::Json(json) => Content::Block(json.to_owned()),
                })
                .collect(),
            structured_content: self.structured.map(RawValue::to_owned),
            meta: self.meta.map(RawValue::to_owned),
            is_error: self.is_error,
            error: self.error.map(|e| CodedError {
                code: e.code,
                message: e.message,
                retryable: e.retryable,
                applied: match e.applied.as_str() {
                    "yes" => Applied::Yes,
                    "no" => Applied::No,
                    _ => Applied::Unknown,
                },
                hint: e.hint,
                status: e.status,
            }),
        }
    }
}

/// Unpickling: the [`PyToolResult`] whose state `__reduce__` wrote.
///
/// # Errors
/// `invalid_params` for bytes no `__reduce__` wrote.
#[pyfunction]
pub fn _tool_result(py: Python<'_>, state: &[u8]) -> PyResult<PyToolResult> {
    let state: State<'_> = serde_json::from_slice(state)
        .map_err(|e| errors::invalid_params(py, format!("not a pickled tool result: {e}")))?;
    Ok(PyToolResult::new(state.into_result()))
}
