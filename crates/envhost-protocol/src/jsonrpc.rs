//! The JSON-RPC envelope of the data plane, `POST /agentenv` (protocol.md#envelope): parsing in the
//! reference's validation order, and the answers, which are always HTTP 200.

use serde_json::{Map, Value, json};

use super::description::Operation;

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

/// The answer object of a success: `{"jsonrpc": "2.0", "id": id, "result": result}`.
pub fn success(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A data-plane request that passed the envelope checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The `id`, echoed verbatim (null for a notification, which is still answered).
    pub id: Value,
    /// The operation, one the environment serves.
    pub operation: Operation,
    /// The params; a missing, null or falsy `params` is `{}` (protocol.md#envelope step 4).
    pub params: Value,
}

fn is_falsy(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// Reads a `POST /agentenv` body (protocol.md#envelope steps 1–4): JSON, then a JSON-RPC 2.0 object
/// with a `method`, then a method in `served`.
///
/// # Errors
/// The [`RpcError`] to answer: -32700, -32600 or -32601, with the messages of the reference.
pub fn parse_request(body: &[u8], served: &[Operation]) -> Result<Request, Box<RpcError>> {
    let value: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(body).map_err(|_| {
            Box::new(RpcError {
                id: Value::Null,
                code: PARSE_ERROR,
                message: "parse error".into(),
                data: None,
            })
        })?
    };
    let Value::Object(mut object) = value else {
        return Err(invalid_request(Value::Null));
    };
    let id = object.remove("id").unwrap_or(Value::Null);
    let version_ok = object.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let Some(method) = object.remove("method").filter(|_| version_ok) else {
        return Err(invalid_request(id));
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
    let params = match object.remove("params") {
        Some(p) if !is_falsy(&p) => p,
        _ => Value::Object(Map::new()),
    };
    Ok(Request {
        id,
        operation,
        params,
    })
}

fn invalid_request(id: Value) -> Box<RpcError> {
    Box::new(RpcError {
        id,
        code: INVALID_REQUEST,
        message: "invalid request".into(),
        data: None,
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
            assert_eq!((r.id, r.params), (Value::Null, json!({})));
        }
        let r = parse_request(
            br#"{"jsonrpc": "2.0", "id": 1, "method": "data/add", "params": [1]}"#,
            &ALL,
        )
        .unwrap();
        assert_eq!(r.params, json!([1]));
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
