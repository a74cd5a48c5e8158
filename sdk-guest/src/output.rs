//! Return values into tool results and extension answers, as the reference SDK converts them.

use serde::Serialize;
use serde_json::Value;

use crate::error::EnvError;
use crate::list;
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

fn invalid_result(e: &serde_json::Error) -> EnvError {
    EnvError::new("invalid_result", format!("the result is not JSON: {e}"))
}

/// A block of 2-space-indented JSON, or the text itself for a string.
fn block(value: &Value) -> ContentBlock {
    match value {
        Value::String(s) => ContentBlock::Text(s.clone()),
        other => ContentBlock::Text(
            crate::json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
        ),
    }
}

/// The content blocks of a return value, `value`, and its compact JSON: none for null, one
/// text block for a string, one block per element for a list, and otherwise one block of
/// 2-space-indented JSON. Each is printed from the value itself, never through a [`Value`].
fn content<T: Serialize + ?Sized>(value: &T) -> Result<(Vec<ContentBlock>, String), EnvError> {
    if let Ok(elements) = list::elements(value) {
        let mut json =
            String::with_capacity(elements.iter().map(|e| e.json.len() + 1).sum::<usize>() + 2);
        json.push('[');
        let mut blocks = Vec::with_capacity(elements.len());
        for (i, element) in elements.into_iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&element.json);
            blocks.push(ContentBlock::Text(element.block));
        }
        json.push(']');
        return Ok((blocks, json));
    }
    let json = crate::json::to_string(value).map_err(|e| invalid_result(&e))?;
    let block = match json.as_bytes().first() {
        Some(b'n') => return Ok((Vec::new(), json)),
        Some(b'"') => serde_json::from_str(&json).map_err(|e| invalid_result(&e))?,
        Some(b'[') => {
            let items: Vec<Value> = serde_json::from_str(&json).map_err(|e| invalid_result(&e))?;
            return Ok((items.iter().map(block).collect(), json));
        }
        Some(b'{') => crate::json::to_string_pretty(value).map_err(|e| invalid_result(&e))?,
        _ => json.clone(),
    };
    Ok((vec![ContentBlock::Text(block)], json))
}

/// The tool result of a successful call that returned `value`.
///
/// # Errors
/// `invalid_result` when `value` does not serialize to JSON.
pub fn tool_result<T: Serialize>(value: &T, shape: OutputShape) -> Result<ToolResult, EnvError> {
    let (content, json) = content(value)?;
    let structured_content = match shape {
        OutputShape::Unstructured => None,
        OutputShape::Object => Some(json),
        // Concatenated, not `format!`ted: the formatting code's tables sit in each episode's own
        // linear memory, and on an episode whose memory is cold they cost more than the rest of
        // the call's wrapping (about 0.6 µs a call in process, across 1,000 episodes).
        OutputShape::Wrapped => Some([r#"{"result":"#, &json, "}"].concat()),
    };
    Ok(ToolResult {
        content,
        structured_content,
        is_error: false,
        meta: None,
    })
}

/// The JSON answer of an extension method that returned `value` (`null` answers `{}`).
///
/// # Errors
/// `invalid_result` when `value` does not serialize to JSON.
pub fn extension_answer<T: Serialize>(value: &T) -> Result<String, EnvError> {
    let json = crate::json::to_string(value).map_err(|e| invalid_result(&e))?;
    Ok(if json == "null" {
        "{}".to_owned()
    } else {
        json
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
                ContentBlock::Block(json) => json.clone(),
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
    fn a_string_gives_its_text_and_an_object_its_indented_json_in_field_order() {
        #[derive(Serialize)]
        struct Out {
            zeta: &'static str,
            alpha: Vec<u8>,
            nested: std::collections::BTreeMap<&'static str, Option<bool>>,
        }
        let r = tool_result(&"a \"quoted\" é\n", OutputShape::Wrapped).unwrap();
        assert_eq!(texts(&r), vec!["a \"quoted\" é\n"]);
        assert_eq!(
            r.structured_content.as_deref(),
            Some(r#"{"result":"a \"quoted\" é\n"}"#)
        );
        let out = Out {
            zeta: "z",
            alpha: vec![1, 2],
            nested: [("b", Some(true)), ("a", None)].into_iter().collect(),
        };
        let r = tool_result(&out, OutputShape::Object).unwrap();
        let value = serde_json::to_value(&out).unwrap();
        assert_eq!(
            texts(&r),
            vec![serde_json::to_string_pretty(&value).unwrap()]
        );
        assert_eq!(r.structured_content, Some(value.to_string()));
        assert!(texts(&r)[0].starts_with("{\n  \"zeta\": \"z\",\n  \"alpha\": ["));
    }

    #[test]
    fn unstructured_results_have_no_structured_content() {
        let r = tool_result(&true, OutputShape::Unstructured).unwrap();
        assert_eq!(texts(&r), vec!["true"]);
        assert_eq!(r.structured_content, None);
    }

    #[test]
    fn extensions_answer_an_object_for_nothing() {
        assert_eq!(extension_answer(&()).unwrap(), "{}");
        assert_eq!(extension_answer(&json!({"a": 1})).unwrap(), r#"{"a":1}"#);
    }
}
