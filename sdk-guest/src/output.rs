//! Return values into tool results and extension answers, as the reference SDK converts them.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::EnvError;
use crate::{ContentBlock, ToolResult};

/// How a tool's return value becomes structured content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputShape {
    /// No output schema and no structured content (an untyped JSON value, or
    /// `structured_output = false`).
    Unstructured,
    /// `{"result": value}` (strings, numbers, lists, options).
    Wrapped,
    /// The value itself (structs and maps).
    Object,
}

fn serialize<T: Serialize>(value: &T) -> Result<Value, EnvError> {
    serde_json::to_value(value)
        .map_err(|e| EnvError::new("invalid_result", format!("the result is not JSON: {e}")))
}

fn block(value: &Value) -> ContentBlock {
    match value {
        Value::String(s) => ContentBlock::Text(s.clone()),
        other => ContentBlock::Text(
            serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
        ),
    }
}

/// The content blocks of a return value: none for null, one text block for a string, one block
/// per element for a list, and otherwise one block of 2-space-indented JSON.
fn content(value: &Value) -> Vec<ContentBlock> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().map(block).collect(),
        other => vec![block(other)],
    }
}

/// The tool result of a successful call that returned `value`.
///
/// # Errors
/// `invalid_result` when `value` does not serialize to JSON.
pub fn tool_result<T: Serialize>(value: &T, shape: OutputShape) -> Result<ToolResult, EnvError> {
    let value = serialize(value)?;
    let content = content(&value);
    let structured_content = match shape {
        OutputShape::Unstructured => None,
        OutputShape::Object => Some(value.to_string()),
        OutputShape::Wrapped => {
            let mut wrapper = Map::new();
            wrapper.insert("result".into(), value);
            Some(Value::Object(wrapper).to_string())
        }
    };
    Ok(ToolResult {
        content,
        structured_content,
        is_error: false,
    })
}

/// The JSON answer of an extension method that returned `value` (`null` answers `{}`).
///
/// # Errors
/// `invalid_result` when `value` does not serialize to JSON.
pub fn extension_answer<T: Serialize>(value: &T) -> Result<String, EnvError> {
    Ok(match serialize(value)? {
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(result: &ToolResult) -> Vec<String> {
        result
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => t.clone(),
                ContentBlock::Image(_) => "<image>".into(),
            })
            .collect()
    }

    #[test]
    fn a_list_gives_one_block_per_element() {
        let r = tool_result(&json!([{"name": "g"}, "x"]), OutputShape::Wrapped).unwrap();
        assert_eq!(texts(&r), vec!["{\n  \"name\": \"g\"\n}", "x"]);
        assert_eq!(
            r.structured_content.as_deref(),
            Some(r#"{"result":[{"name":"g"},"x"]}"#)
        );
    }

    #[test]
    fn null_gives_no_blocks_and_numbers_their_text() {
        assert!(
            tool_result(&(), OutputShape::Unstructured)
                .unwrap()
                .content
                .is_empty()
        );
        let r = tool_result(&2, OutputShape::Wrapped).unwrap();
        assert_eq!(texts(&r), vec!["2"]);
    }

    #[test]
    fn extensions_answer_an_object_for_nothing() {
        assert_eq!(extension_answer(&()).unwrap(), "{}");
        assert_eq!(extension_answer(&json!({"a": 1})).unwrap(), r#"{"a":1}"#);
    }
}
