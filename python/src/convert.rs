//! Python values to and from the protocol's JSON: parts, tool arguments, extension params and
//! answers, as the plain dicts and lists a model API takes.

use envhost::protocol::Part;
use envhost::protocol::part::parts_from_list;
use pyo3::prelude::*;
use pythonize::{depythonize, pythonize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::errors;

/// `value` (a dict, list, str, int, float, bool or None, nested) as JSON.
///
/// # Errors
/// `invalid_params` naming `what` for a value JSON cannot hold (a set, bytes, an object).
pub fn to_json(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    depythonize(value)
        .map_err(|e| errors::invalid_params(value.py(), format!("{what} is not JSON: {e}")))
}

/// A dict of tool arguments or extension params as a JSON object; `None` is `{}`.
///
/// # Errors
/// `invalid_params` for anything but a dict of JSON values.
pub fn to_object(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Map<String, Value>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(Map::new());
    };
    match to_json(value, what)? {
        Value::Object(object) => Ok(object),
        other => Err(errors::invalid_params(
            value.py(),
            format!("{what} must be a dict, got {}", kind(&other)),
        )),
    }
}

/// A list of parts (`{"kind": "data", "data": {...}}`, `{"kind": "text", "text": ...}`, `{"kind":
/// "file", "file": {"uri" | "bytes", ...}}`, protocol.md#parts) as the protocol's parts.
///
/// # Errors
/// `invalid_params` naming the part that does not fit.
pub fn to_parts(value: &Bound<'_, PyAny>) -> PyResult<Vec<Part>> {
    let json = to_json(value, "parts")?;
    let Value::Array(items) = json else {
        return Err(errors::invalid_params(
            value.py(),
            format!("parts must be a list, got {}", kind(&json)),
        ));
    };
    let text = serde_json::to_string(&Value::Array(items))
        .map_err(|e| errors::invalid_params(value.py(), e.to_string()))?;
    let list = RawValue::from_string(text)
        .map_err(|e| errors::invalid_params(value.py(), e.to_string()))?;
    parts_from_list(&list).map_err(|detail| errors::invalid_params(value.py(), detail))
}

/// `value` as Python: dicts, lists, str, int, float, bool, None.
pub fn to_python<'py>(
    py: Python<'py>,
    value: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    pythonize(py, value).map_err(|e| errors::invalid_params(py, e.to_string()))
}

/// `value` as Python through its JSON text (read by Python's own `json.loads`): for values that
/// hold JSON as text, as parts' data objects do.
pub fn to_python_via_text<'py>(
    py: Python<'py>,
    value: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let text =
        serde_json::to_string(value).map_err(|e| errors::invalid_params(py, e.to_string()))?;
    from_json_text(py, &text)
}

/// JSON `text` as Python values (`json.loads`).
pub fn from_json_text<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// The JSON type of `value`, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "None",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a str",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}
