//! Extension requests (protocol.md#extension-calls): reading params from a query string or a JSON
//! body, binding them to the method's request schema, and coercing strings to the declared types.

use serde_json::{Map, Value};

use super::description::Object;
use super::error::CodedError;

/// Params from a query string: `key=value` pairs, percent-decoded, the last value of a repeated
/// key winning.
pub fn query_params(query: &str) -> Object {
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
        .collect()
}

/// Params from a request body: an empty body is `{}`.
///
/// # Errors
/// `invalid_params`: `request body must be a JSON object`, or the JSON decoder's message.
pub fn body_params(body: &[u8]) -> Result<Object, CodedError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Object::new());
    }
    match serde_json::from_slice(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(CodedError::invalid_params(
            "request body must be a JSON object",
        )),
        Err(e) => Err(CodedError::invalid_params(e.to_string())),
    }
}

/// The JSON types a property schema declares (`type` as a string or a list).
fn declared_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn coerce(value: Value, schema: &Value) -> Result<Value, CodedError> {
    let Value::String(text) = &value else {
        return Ok(value);
    };
    let types = declared_types(schema);
    if types.is_empty() || types.contains(&"string") {
        return Ok(value);
    }
    let trimmed = text.trim();
    if types.contains(&"boolean") {
        return match trimmed.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(Value::Bool(true)),
            "false" | "0" | "no" | "off" => Ok(Value::Bool(false)),
            _ => Err(CodedError::invalid_params(format!(
                "invalid boolean: '{text}'"
            ))),
        };
    }
    if types.contains(&"integer") {
        return trimmed.parse::<i64>().map(Value::from).map_err(|_| {
            CodedError::invalid_params(format!("invalid literal for int() with base 10: '{text}'"))
        });
    }
    if types.contains(&"number") {
        return trimmed
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| {
                CodedError::invalid_params(format!("could not convert string to float: '{text}'"))
            });
    }
    Ok(value)
}

/// Binds `params` to a request schema (protocol.md#extension-calls): every `required` property
/// present, no property the schema does not declare (unless it allows additional properties),
/// string values coerced to the declared boolean, integer or number types.
///
/// # Errors
/// `invalid_params`: `missing a required argument: '<name>'`, `got an unexpected keyword argument
/// '<name>'`, or a coercion message such as `invalid boolean: 'maybe'`.
pub fn bind(params: Object, schema: &Object) -> Result<Object, CodedError> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !params.contains_key(name) {
            return Err(CodedError::invalid_params(format!(
                "missing a required argument: '{name}'"
            )));
        }
    }
    let open = matches!(schema.get("additionalProperties"), Some(v) if v != &Value::Bool(false));
    let mut out = Object::new();
    for (name, value) in params {
        let value = match properties.get(&name) {
            Some(property) => coerce(value, property)?,
            None if open => value,
            None => {
                return Err(CodedError::invalid_params(format!(
                    "got an unexpected keyword argument '{name}'"
                )));
            }
        };
        out.insert(name, value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Object {
        json!({"type": "object", "properties": {
            "name": {"type": "string"}, "count": {"type": "integer"},
            "flag": {"type": ["boolean", "null"]}, "ratio": {"type": "number"}},
            "required": ["name"]})
        .as_object()
        .unwrap()
        .clone()
    }

    fn msg(params: Value) -> String {
        bind(params.as_object().unwrap().clone(), &schema())
            .unwrap_err()
            .message
    }

    #[test]
    fn strings_are_coerced_to_declared_types() {
        let params = query_params("name=x&count=3&flag=%20Yes&ratio=0.5&count=4");
        assert_eq!(
            Value::Object(bind(params, &schema()).unwrap()),
            json!({"name": "x", "count": 4, "flag": true, "ratio": 0.5})
        );
    }

    #[test]
    fn binding_errors_use_the_reference_messages() {
        assert_eq!(msg(json!({})), "missing a required argument: 'name'");
        assert_eq!(
            msg(json!({"name": "x", "zzz": 1})),
            "got an unexpected keyword argument 'zzz'"
        );
        assert_eq!(
            msg(json!({"name": "x", "flag": "maybe"})),
            "invalid boolean: 'maybe'"
        );
        assert_eq!(
            msg(json!({"name": "x", "count": "x"})),
            "invalid literal for int() with base 10: 'x'"
        );
    }

    #[test]
    fn bodies_must_be_objects() {
        assert_eq!(body_params(b"").unwrap(), Object::new());
        assert_eq!(
            body_params(b"[1]").unwrap_err().message,
            "request body must be a JSON object"
        );
        assert!(body_params(b"{").is_err());
    }
}
