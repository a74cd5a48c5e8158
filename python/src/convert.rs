//! Python values to and from the protocol's JSON: parts, tool arguments, extension params and
//! answers, as the plain dicts and lists a model API takes.

use envhost::protocol::Part;
use envhost::protocol::part::parts_from_list;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pythonize::pythonize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::errors;

/// `value` (a dict with str keys, list, tuple, str, int, float, bool or None, nested) as JSON.
/// Written here rather than with pythonize's `depythonize`, which asks `collections.abc` about
/// every value: for the arguments of a trivial tool call that took longer than the call.
///
/// # Errors
/// `invalid_params` naming `what` for a value JSON cannot hold (a set, bytes, an object, a
/// non-finite float, a dict key that is not a str, nesting deeper than 128).
pub fn to_json(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    json_of(value, 0)
        .map_err(|why| errors::invalid_params(value.py(), format!("{what} is not JSON: {why}")))
}

/// The deepest nesting [`to_json`] follows.
const MAX_DEPTH: usize = 128;

fn json_of(value: &Bound<'_, PyAny>, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH}"));
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(text) = value.cast::<PyString>() {
        return text
            .to_str()
            .map(|t| Value::String(t.to_owned()))
            .map_err(|e| e.to_string());
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(int) = value.cast::<PyInt>() {
        if let Ok(n) = int.extract::<i64>() {
            return Ok(Value::from(n));
        }
        return int
            .extract::<u64>()
            .map(Value::from)
            .map_err(|_| format!("{int} is too large"));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        let x = float.value();
        return serde_json::Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| format!("{x} is not a finite number"));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut object = Map::new();
        for (key, item) in dict.iter() {
            let key = key
                .cast::<PyString>()
                .map_err(|_| format!("a dict key is a {}, not a str", type_name(&key)))?;
            let key = key.to_str().map_err(|e| e.to_string())?.to_owned();
            object.insert(key, json_of(&item, depth + 1)?);
        }
        return Ok(Value::Object(object));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        return value
            .try_iter()
            .map_err(|e| e.to_string())?
            .map(|item| json_of(&item.map_err(|e| e.to_string())?, depth + 1))
            .collect::<Result<_, _>>()
            .map(Value::Array);
    }
    Err(format!("a {} is not a JSON value", type_name(value)))
}

/// The name of `value`'s type, for messages.
fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "value".to_owned(), |n| n.to_string())
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
