//! `envhost.ToolResult`: what a tool call answered, read into Python values as they are asked
//! for (docs/python.md#tool-results).

use envhost::protocol::{Content, ToolResult};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

use crate::convert::{from_json_text, to_python};
use crate::errors;

/// A tool call's result (protocol.md#tool-results): `is_error`, `text`, `content`, `structured`,
/// `error`; `to_dict()` is MCP's `tools/call` result.
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
                Content::Image { .. } => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The content blocks: `{"type": "text", "text"}` and `{"type": "image", "data" (base64),
    /// "mimeType"}` dicts, in order.
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let blocks = PyList::empty(py);
        for block in &self.result.content {
            let dict = PyDict::new(py);
            match block {
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

    /// A failed call's coded error, `{"code", "message", "retryable", "applied", "hint"}`; None
    /// for a success or an uncoded failure (an unknown tool, arguments that fail the schema).
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
