//! A tool call's answer on the wire: envhost's [`ToolResult`] as rmcp's `CallToolResult`
//! (protocol.md#tool-results), without a `resultType`.

use envhost_protocol::{Content, ToolResult};
use rmcp::model::{CallToolResult, ContentBlock};

/// `result` as MCP's `tools/call` result.
pub fn call_tool_result(result: ToolResult) -> CallToolResult {
    let content = result
        .content
        .into_iter()
        .map(|block| match block {
            Content::Text(text) => ContentBlock::text(text),
            Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        })
        .collect();
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = result.structured_content;
    out.result_type = None;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use envhost_protocol::CodedError;
    use serde_json::json;

    #[test]
    fn results_encode_as_the_reference_answers_them() {
        let ok = ToolResult::success(
            vec![Content::Text("ok".into())],
            Some(json!({"result": "ok"})),
        );
        assert_eq!(
            serde_json::to_value(call_tool_result(ok)).unwrap(),
            json!({"content": [{"type": "text", "text": "ok"}],
                   "structuredContent": {"result": "ok"}, "isError": false})
        );
        let refused = ToolResult::coded(CodedError::new("permission_denied", "no"));
        assert_eq!(
            serde_json::to_value(call_tool_result(refused)).unwrap(),
            json!({"content": [{"type": "text", "text": "permission_denied: no"}],
                   "structuredContent": {"code": "permission_denied", "message": "no",
                                         "retryable": false, "applied": "no"},
                   "isError": true})
        );
    }
}
