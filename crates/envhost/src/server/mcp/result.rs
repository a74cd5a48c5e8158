//! A tool call's answer on the wire: envhost's [`ToolResult`] as MCP's `tools/call` result
//! (protocol.md#tool-results), without a `resultType`.
//!
//! rmcp's `CallToolResult` holds structured content as a `serde_json::Value`, which would mean
//! parsing the environment's JSON text into a tree only to print it again; [`CallToolAnswer`]
//! writes the same fields in the same order with rmcp's content blocks, and the structured
//! content, the blocks the environment wrote as JSON and `_meta` as the text they are (a test
//! checks the bytes against rmcp's).

use envhost_protocol::{Content, ToolResult};
use rmcp::model::ContentBlock;
use serde::Serialize;
use serde_json::value::RawValue;

/// A content block: one of rmcp's, or the JSON object the environment wrote (already checked
/// to be one). rmcp's blocks are the common case and stay unboxed, as in rmcp's own result.
#[derive(Serialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)]
enum Block {
    Made(ContentBlock),
    Written(Box<RawValue>),
}

/// MCP's `tools/call` result: `{"content", "structuredContent"?, "isError", "_meta"?}`.
#[derive(Serialize)]
pub struct CallToolAnswer {
    content: Vec<Block>,
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    structured_content: Option<Box<RawValue>>,
    #[serde(rename = "isError")]
    is_error: bool,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Box<RawValue>>,
}

impl CallToolAnswer {
    /// About how many bytes the result encodes to: its texts, images and structured content,
    /// and a few bytes of framing each (more when the texts need escapes).
    pub fn size_hint(&self) -> usize {
        const FRAMING: usize = 48;
        let blocks: usize = self
            .content
            .iter()
            .map(|block| match block {
                Block::Made(ContentBlock::Text(text)) => text.text.len() + FRAMING,
                Block::Made(ContentBlock::Image(image)) => {
                    image.data.len() + image.mime_type.len() + FRAMING
                }
                Block::Made(_) => FRAMING,
                Block::Written(json) => json.get().len(),
            })
            .sum();
        let raw = |json: &Option<Box<RawValue>>| json.as_ref().map_or(0, |s| s.get().len());
        blocks + raw(&self.structured_content) + raw(&self.meta) + FRAMING
    }
}

/// `result` as MCP's `tools/call` result.
pub fn call_tool_result(result: ToolResult) -> CallToolAnswer {
    let content = result
        .content
        .into_iter()
        .map(|block| match block {
            Content::Text(text) => Block::Made(ContentBlock::text(text)),
            Content::Image { data, mime_type } => Block::Made(ContentBlock::image(data, mime_type)),
            Content::Block(json) => Block::Written(json),
        })
        .collect();
    CallToolAnswer {
        content,
        structured_content: result.structured_content,
        is_error: result.is_error,
        meta: result.meta,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envhost_protocol::CodedError;
    use rmcp::model::CallToolResult;
    use serde_json::json;

    /// What rmcp's own type writes for `result`.
    fn rmcp_bytes(result: &ToolResult) -> String {
        let content = result
            .content
            .iter()
            .map(|block| match block {
                Content::Text(text) => ContentBlock::text(text.clone()),
                Content::Image { data, mime_type } => {
                    ContentBlock::image(data.clone(), mime_type.clone())
                }
                Content::Block(json) => serde_json::from_str(json.get()).unwrap(),
            })
            .collect();
        let mut out = if result.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        out.structured_content = result.structured();
        out.result_type = None;
        serde_json::to_string(&out).unwrap()
    }

    #[test]
    fn results_encode_as_rmcp_and_the_reference_answer_them() {
        let structured = |v: serde_json::Value| serde_json::value::to_raw_value(&v).ok();
        let ok = ToolResult::success(
            vec![Content::Text("ok".into())],
            structured(json!({"result": "ok"})),
        );
        let refused = ToolResult::coded(CodedError::new("permission_denied", "no"));
        let image = ToolResult::success(
            vec![Content::Image {
                data: "iVBORw0=".into(),
                mime_type: "image/png".into(),
            }],
            None,
        );
        let own = ToolResult::failure(vec![Content::Text("é \"q\"\n".into())], None);
        for result in [&ok, &refused, &image, &own] {
            let ours = serde_json::to_string(&call_tool_result(result.clone())).unwrap();
            assert_eq!(ours, rmcp_bytes(result));
        }
        assert_eq!(
            serde_json::to_value(call_tool_result(refused)).unwrap(),
            json!({"content": [{"type": "text", "text": "permission_denied: no"}],
                   "structuredContent": {"code": "permission_denied", "message": "no",
                                         "retryable": false, "applied": "no"},
                   "isError": true})
        );
    }
}
