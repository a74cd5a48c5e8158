//! How an agentenv A2A agent writes its answers (docs/agent-env.md#wire): JSON as Starlette
//! writes it (compact, UTF-8), A2A objects with their keys in a2a-sdk's order (alphabetical),
//! the contents of data parts and metadata as given; errors of the extension routes as
//! `text/plain`.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;

/// The keys whose values are the caller's or the agent's own JSON, kept in their order.
const OPAQUE_KEYS: [&str; 2] = ["metadata", "data"];

/// `value` with the keys of every A2A object in alphabetical order, as a2a-sdk's models write
/// them; the value of a `metadata` key, or of a data part's `data`, is left as it is.
pub fn canonical(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.sort_keys();
            let is_data_part = map.get("kind").and_then(Value::as_str) == Some("data");
            for (key, inner) in map.iter_mut() {
                let opaque = key == OPAQUE_KEYS[0] || (key == OPAQUE_KEYS[1] && is_data_part);
                if !opaque {
                    canonical(inner);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(canonical),
        _ => {}
    }
}

/// `value`'s compact encoding after [`canonical`].
pub fn encode(mut value: Value) -> Vec<u8> {
    canonical(&mut value);
    serde_json::to_vec(&value).unwrap_or_default()
}

/// A JSON answer: `value` after [`canonical`], `application/json`.
pub fn json(status: StatusCode, value: Value) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        encode(value),
    )
        .into_response()
}

/// A JSON answer with the keys in the order given (what the framework's extension routes
/// write).
pub fn json_as_is(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        serde_json::to_vec(value).unwrap_or_default(),
    )
        .into_response()
}

/// A `text/plain` answer: how the framework's extension routes refuse.
pub fn text(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        message.into(),
    )
        .into_response()
}

/// One validation error as pydantic lists it: `{"type", "loc": [field], "msg"}`.
pub fn field_error(kind: &str, field: &str, message: &str) -> Value {
    serde_json::json!({"type": kind, "loc": [field], "msg": message})
}

/// 400 with `errors` (pydantic's list) as its text.
pub fn invalid(errors: Vec<Value>) -> Response {
    text(StatusCode::BAD_REQUEST, Value::Array(errors).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a2a_keys_sort_and_data_parts_keep_their_order() {
        let value = serde_json::json!({
            "status": {"state": "completed", "message": {"role": "agent", "parts": [
                {"kind": "data", "data": {"zeta": 1, "alpha": {"b": 1, "a": 2}}},
                {"text": "hi", "kind": "text"}
            ]}},
            "metadata": {"z": 1, "a": 2},
            "id": "t"
        });
        assert_eq!(
            String::from_utf8(encode(value)).unwrap(),
            r#"{"id":"t","metadata":{"z":1,"a":2},"status":{"message":{"parts":[{"data":{"zeta":1,"alpha":{"b":1,"a":2}},"kind":"data"},{"kind":"text","text":"hi"}],"role":"agent"},"state":"completed"}}"#
        );
    }
}
