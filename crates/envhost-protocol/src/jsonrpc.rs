//! The JSON-RPC envelope of the data plane, `POST /agentenv` (protocol.md#envelope): parsing in the
//! reference's validation order, and the answers, which are always HTTP 200.

use std::borrow::Cow;
use std::collections::HashMap;

use std::marker::PhantomData;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::description::Operation;
use super::part::{FastParams, Part, once};

/// `-32700`: the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// `-32600`: not a JSON-RPC 2.0 request object.
pub const INVALID_REQUEST: i64 = -32600;
/// `-32601`: the method is not served.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// `-32602`: the params do not fit (message `invalid_request`, protocol.md#envelope step 5).
pub const INVALID_PARAMS: i64 = -32602;
/// `-32000`: the handler failed (`data.code` names the operation, protocol.md#envelope step 6).
pub const HANDLER_FAILED: i64 = -32000;

/// A JSON-RPC error answer.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The request's `id` (null when it has none or could not be read).
    pub id: Value,
    /// The error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// The `data` member, when any.
    pub data: Option<Value>,
}

impl RpcError {
    /// `-32602` with message `invalid_request` and `data.detail` = `detail` (protocol.md#envelope
    /// step 5).
    pub fn invalid_params(id: Value, detail: impl Into<String>) -> Self {
        Self {
            id,
            code: INVALID_PARAMS,
            message: "invalid_request".into(),
            data: Some(json!({"detail": detail.into()})),
        }
    }

    /// `-32000` with the failure's message and `data.code` = `reset_failed`, `add_failed` or
    /// `get_failed` (protocol.md#envelope step 6).
    pub fn handler_failed(id: Value, operation: Operation, message: impl Into<String>) -> Self {
        let code = match operation {
            Operation::Reset => "reset_failed",
            Operation::Add => "add_failed",
            Operation::Get => "get_failed",
        };
        Self {
            id,
            code: HANDLER_FAILED,
            message: message.into(),
            data: Some(json!({"code": code})),
        }
    }

    /// The answer object: `{"jsonrpc", "id", "error": {"code", "message", "data"?}}`.
    pub fn to_json(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), self.code.into());
        error.insert("message".into(), Value::String(self.message.clone()));
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        json!({"jsonrpc": "2.0", "id": self.id, "error": error})
    }
}

/// The answer object of a success: `{"jsonrpc": "2.0", "id": id, "result": result}`, written
/// straight from `result` (no tree in between).
#[derive(Clone, Debug, Serialize)]
pub struct Success<T> {
    jsonrpc: &'static str,
    id: Value,
    result: T,
}

/// The answer of a success of request `id`.
pub fn success<T: Serialize>(id: Value, result: T) -> Success<T> {
    Success {
        jsonrpc: "2.0",
        id,
        result,
    }
}

/// A data-plane request that passed the envelope checks.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The `id`, echoed verbatim (null for a notification, which is still answered).
    pub id: Value,
    /// The operation, one the environment serves.
    pub operation: Operation,
    /// The params as their JSON text, borrowed from the body where it could be; a missing,
    /// null or falsy `params` is `{}` (protocol.md#envelope step 4).
    pub params: Cow<'a, RawValue>,
}

/// Whether `params` is falsy as Python reads it: null, false, 0, `""`, `[]` or `{}`.
fn is_falsy(params: &RawValue) -> bool {
    let text = params.get();
    let empty_after_bracket = || text[1..].trim_start().len() == 1;
    match text.as_bytes().first() {
        Some(b'n' | b'f') => true,
        Some(b'{' | b'[') => empty_after_bracket(),
        Some(b'"') => text == "\"\"",
        Some(b'-' | b'0'..=b'9') => text.parse::<f64>().is_ok_and(|n| n == 0.0),
        _ => false,
    }
}

/// The members of a request object, each as its JSON text (a key given twice: the last).
type Members<'a> = HashMap<&'a str, &'a RawValue>;

/// Reads a `POST /agentenv` body (protocol.md#envelope steps 1–4): JSON, then a JSON-RPC 2.0 object
/// with a `method`, then a method in `served`. The params are not parsed: they stay the text
/// they are in the body (copied only when a key of the request is written with escapes).
///
/// # Errors
/// The [`RpcError`] to answer: -32700, -32600 or -32601, with the messages of the reference.
pub fn parse_request<'a>(
    body: &'a [u8],
    served: &[Operation],
) -> Result<Request<'a>, Box<RpcError>> {
    if let Ok(members) = serde_json::from_slice::<Members<'a>>(body) {
        let member = |key: &str| members.get(key).map(|raw| Cow::Borrowed(*raw));
        return check(
            member("id"),
            member("jsonrpc"),
            member("method"),
            member("params"),
            served,
        );
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(invalid_request(
            Value::Null,
            "the body is empty: send one JSON-RPC 2.0 request object",
        ));
    }
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        Box::new(RpcError {
            id: Value::Null,
            code: PARSE_ERROR,
            message: "parse error".into(),
            data: Some(detail(&format!("the body is not JSON: {e}"))),
        })
    })?;
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            let message =
                "the body is a JSON array: batches are not served; send one request object";
            return Err(invalid_request(Value::Null, message));
        }
        other => {
            let message = format!("the body is {}, not a request object", json_kind(&other));
            return Err(invalid_request(Value::Null, &message));
        }
    };
    let member = |key: &str| {
        let raw = object
            .get(key)
            .and_then(|v| serde_json::value::to_raw_value(v).ok());
        raw.map(Cow::Owned)
    };
    check(
        member("id"),
        member("jsonrpc"),
        member("method"),
        member("params"),
        served,
    )
}

/// A `data/add` request read in one pass over its body, the parts' data kept as text
/// ([`crate::part::parts_from_add_params`]'s reading): `{"jsonrpc": "2.0", "method":
/// "data/add", "id"?, "params": {"parts": [...]}}` with each key once, keys in any order, other
/// keys ignored. Answers the id and the parts; `None` for anything else, which
/// [`parse_request`] then reads (the same request reads the same either way).
pub fn parse_add_request(body: &[u8]) -> Option<(Value, Vec<Part>)> {
    let request: AddRequest<'_> = serde_json::from_slice(body).ok()?;
    let ok =
        request.version.is_some_and(|v| v.get() == "\"2.0\"") && request.method == Some("data/add");
    let id = match request.id {
        Some(raw) => serde_json::from_str(raw.get()).ok()?,
        None => Value::Null,
    };
    let parts = request.params?.into_parts()?;
    ok.then_some((id, parts))
}

/// A `data/add` request as [`parse_add_request`] reads it.
#[derive(Default)]
struct AddRequest<'a> {
    version: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a str>,
    params: Option<FastParams<'a>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for AddRequest<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AddRequestVisitor(PhantomData))
    }
}

/// Reads an [`AddRequest`] from a map only, each key at most once.
struct AddRequestVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for AddRequestVisitor<'a> {
    type Value = AddRequest<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a data/add request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut request = AddRequest::default();
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "jsonrpc" => once(&mut request.version, map.next_value()?)?,
                "id" => once(&mut request.id, map.next_value()?)?,
                "method" => once(&mut request.method, map.next_value()?)?,
                "params" => once(&mut request.params, map.next_value()?)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(request)
    }
}

/// Steps 2–4 of the envelope on a request object's members.
fn check<'a>(
    id: Option<Cow<'a, RawValue>>,
    version: Option<Cow<'a, RawValue>>,
    method: Option<Cow<'a, RawValue>>,
    params: Option<Cow<'a, RawValue>>,
    served: &[Operation],
) -> Result<Request<'a>, Box<RpcError>> {
    let value = |raw: &RawValue| serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null);
    let id = id.map_or(Value::Null, |raw| value(&raw));
    match version.map(|raw| value(&raw)) {
        Some(Value::String(v)) if v == "2.0" => {}
        None => {
            let message = "the request has no `jsonrpc` member; it must be \"2.0\"";
            return Err(invalid_request(id, message));
        }
        Some(other) => {
            let message = format!("`jsonrpc` is {other}; it must be \"2.0\"");
            return Err(invalid_request(id, &message));
        }
    }
    let Some(method) = method.map(|raw| value(&raw)) else {
        let message = "the request has no `method` member (data/reset, data/add or data/get)";
        return Err(invalid_request(id, message));
    };
    let operation = method
        .as_str()
        .and_then(Operation::from_method)
        .filter(|op| served.contains(op));
    let Some(operation) = operation else {
        let name = match &method {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Err(Box::new(RpcError {
            id,
            code: METHOD_NOT_FOUND,
            message: format!("method not found: {name}"),
            data: None,
        }));
    };
    let params = match params {
        Some(p) if !is_falsy(&p) => p,
        _ => Cow::Owned(empty_object()),
    };
    Ok(Request {
        id,
        operation,
        params,
    })
}

/// `{}`.
fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".into()).unwrap_or_else(|_| unreachable!("{{}} is JSON"))
}

/// `{"detail": text}`: where envhost says what is wrong with a request beyond the reference's
/// message (protocol.md#envelope).
fn detail(text: &str) -> Value {
    serde_json::json!({ "detail": text })
}

/// What a JSON value is, with its article, for messages: `a string`, `a number`.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// -32600 `invalid request`, with `data.detail` saying why.
fn invalid_request(id: Value, why: &str) -> Box<RpcError> {
    Box::new(RpcError {
        id,
        code: INVALID_REQUEST,
        message: "invalid request".into(),
        data: Some(detail(why)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Operation; 3] = [Operation::Reset, Operation::Add, Operation::Get];

    fn code(body: &str) -> (i64, Value) {
        let e = parse_request(body.as_bytes(), &ALL).unwrap_err();
        (e.code, e.id)
    }

    fn why(body: &str) -> String {
        let e = parse_request(body.as_bytes(), &ALL).unwrap_err();
        e.data.unwrap()["detail"].as_str().unwrap().to_owned()
    }

    #[test]
    fn envelope_errors_say_where_and_what() {
        assert_eq!(
            why("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n}"),
            "the body is not JSON: trailing comma at line 4 column 1"
        );
        assert_eq!(
            why(r#"{"jsonrpc": "2.0", "id": 1}"#),
            "the request has no `method` member (data/reset, data/add or data/get)"
        );
        assert_eq!(
            why(r#"{"id": 1, "method": "data/get"}"#),
            "the request has no `jsonrpc` member; it must be \"2.0\""
        );
        assert_eq!(
            why(r#"{"jsonrpc": 2, "method": "data/get"}"#),
            "`jsonrpc` is 2; it must be \"2.0\""
        );
        assert_eq!(
            why(" "),
            "the body is empty: send one JSON-RPC 2.0 request object"
        );
        assert!(why("[]").contains("batches are not served"));
        assert_eq!(why("5"), "the body is a number, not a request object");
    }

    #[test]
    fn envelope_errors_follow_the_reference_order() {
        assert_eq!(code("{nope"), (PARSE_ERROR, Value::Null));
        assert_eq!(code(""), (INVALID_REQUEST, Value::Null));
        assert_eq!(code("[1]"), (INVALID_REQUEST, Value::Null));
        assert_eq!(
            code(r#"{"jsonrpc": "1.0", "id": 7, "method": "data/get"}"#),
            (INVALID_REQUEST, json!(7))
        );
        assert_eq!(
            code(r#"{"jsonrpc": "2.0", "id": "a"}"#),
            (INVALID_REQUEST, json!("a"))
        );
        assert_eq!(
            code(r#"{"jsonrpc": "2.0", "id": 3, "method": "data/nope"}"#),
            (METHOD_NOT_FOUND, json!(3))
        );
        assert_eq!(
            code(r#"{"jsonrpc": "2.0", "id": 3, "method": ["x"]}"#),
            (METHOD_NOT_FOUND, json!(3))
        );
        let e = parse_request(
            br#"{"jsonrpc": "2.0", "id": 1, "method": "data/add"}"#,
            &[Operation::Get],
        )
        .unwrap_err();
        assert_eq!(e.message, "method not found: data/add");
    }

    #[test]
    fn falsy_params_are_an_empty_object() {
        for params in ["null", "0", "false", "[]", "\"\""] {
            let body = format!(r#"{{"jsonrpc": "2.0", "method": "data/get", "params": {params}}}"#);
            let r = parse_request(body.as_bytes(), &ALL).unwrap();
            assert_eq!((r.id, r.params.get()), (Value::Null, "{}"));
        }
        for params in ["[1]", "{ }", "0.5", "\"x\"", "true", "[ 0 ]", "{\"a\": 1}"] {
            let body = format!(
                r#"{{"jsonrpc": "2.0", "id": 1, "method": "data/add", "params": {params}}}"#
            );
            let r = parse_request(body.as_bytes(), &ALL).unwrap();
            let expected = if params == "{ }" { "{}" } else { params };
            assert_eq!(r.params.get(), expected, "{params}");
        }
        let escaped =
            br#"{"jsonrpc": "2.0", "id": 1, "method": "data/add", "par\u0061ms": {"a": [1]}}"#;
        assert_eq!(
            parse_request(escaped, &ALL).unwrap().params.get(),
            r#"{"a":[1]}"#
        );
    }

    #[test]
    fn an_add_request_reads_in_one_pass_as_the_envelope_reads_it() {
        let body = br#"{"params": {"parts": [{"kind": "data", "data": {"a": [1, 2]}}]}, "id": 7, "jsonrpc": "2.0", "method": "data/add", "x": 1}"#;
        let (id, parts) = parse_add_request(body).unwrap();
        let request = parse_request(body, &ALL).unwrap();
        assert_eq!(id, request.id);
        assert_eq!(
            parts,
            crate::part::parts_from_add_params(&request.params).unwrap()
        );
        for other in [
            r#"{"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {"parts": []}}"#,
            r#"{"jsonrpc": "1.0", "id": 1, "method": "data/add", "params": {"parts": []}}"#,
            r#"{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "data/add", "params": {"parts": []}}"#,
            r#"{"jsonrpc": "2.0", "method": "data/add", "params": {"parts": [{"kind": "file", "file": {"uri": "x"}}]}}"#,
            r#"{"jsonrpc": "2.0", "method": "data/add"}"#,
            r#"[{"jsonrpc": "2.0", "method": "data/add", "params": {"parts": []}}]"#,
        ] {
            assert!(parse_add_request(other.as_bytes()).is_none(), "{other}");
        }
        let bare =
            parse_add_request(br#"{"jsonrpc":"2.0","method":"data/add","params":{"parts":[]}}"#);
        assert_eq!(bare, Some((Value::Null, Vec::new())));
    }

    #[test]
    fn answers_have_the_reference_shape() {
        let e = RpcError::handler_failed(json!(1), Operation::Add, "boom");
        assert_eq!(
            e.to_json(),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "boom", "data": {"code": "add_failed"}}})
        );
    }
}
