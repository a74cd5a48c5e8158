//! A tool call's answer (protocol.md#tool-results): its content blocks, its structured content,
//! and whether it is an error. Coded errors and refusals are error results of the shape MCP
//! clients see, and keep the [`CodedError`] they came from.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::CodedError;

/// One content block of a tool result.
#[derive(Clone, Debug)]
pub enum Content {
    /// A text block: MCP's `{"type": "text", "text"}`.
    Text(String),
    /// An image block: MCP's `{"type": "image", "data", "mimeType"}`.
    Image {
        /// The image's bytes, base64-encoded.
        data: String,
        /// Its media type, e.g. `image/png`.
        mime_type: String,
    },
    /// Any other MCP content block (audio, an embedded resource, a resource link, a block with
    /// annotations), as the JSON object the environment wrote, already checked to be one.
    Block(Box<RawValue>),
}

impl PartialEq for Content {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Text(a), Self::Text(b)) => a == b,
            (
                Self::Image { data, mime_type },
                Self::Image {
                    data: d,
                    mime_type: m,
                },
            ) => data == d && mime_type == m,
            (Self::Block(a), Self::Block(b)) => a.get() == b.get(),
            _ => false,
        }
    }
}

impl Eq for Content {}

/// What a tool call answered.
#[derive(Clone, Debug)]
pub struct ToolResult {
    /// The content blocks, in order.
    pub content: Vec<Content>,
    /// The structured content, as JSON text (checked to be JSON, written to the wire as it is):
    /// a successful result's JSON, or the error object of a coded error.
    /// [`ToolResult::structured`] reads it into a [`Value`].
    pub structured_content: Option<Box<RawValue>>,
    /// Whether the call failed (MCP's `isError`).
    pub is_error: bool,
    /// The coded error of a failed call that has one: the environment's own, a refusal by tool
    /// access, a fault of the guest, a full queue. `structured_content` holds its object.
    pub error: Option<CodedError>,
    /// The result's `_meta` object, as JSON text, when the environment gave one.
    pub meta: Option<Box<RawValue>>,
}

impl ToolResult {
    /// A successful result.
    pub fn success(content: Vec<Content>, structured_content: Option<Box<RawValue>>) -> Self {
        Self {
            content,
            structured_content,
            is_error: false,
            error: None,
            meta: None,
        }
    }

    /// An error result of the tool's own (`is_error` set, no coded error).
    pub fn failure(content: Vec<Content>, structured_content: Option<Box<RawValue>>) -> Self {
        Self {
            is_error: true,
            ..Self::success(content, structured_content)
        }
    }

    /// An error result with one text block and no structured content: an unknown tool, or
    /// arguments that fail the input schema.
    pub fn text_error(text: String) -> Self {
        Self::failure(vec![Content::Text(text)], None)
    }

    /// `error` as a tool result: text `"<code>: <message>"`, the error object as structured
    /// content.
    pub fn coded(error: CodedError) -> Self {
        Self {
            content: vec![Content::Text(error.to_text())],
            structured_content: serde_json::value::to_raw_value(&error.to_object()).ok(),
            is_error: true,
            error: Some(error),
            meta: None,
        }
    }

    /// The structured content as a [`Value`] (`None` when there is none, or when serde_json
    /// cannot hold it as a `Value`: a number beyond `f64`, a lone surrogate escape).
    pub fn structured(&self) -> Option<Value> {
        serde_json::from_str(self.structured_content.as_deref()?.get()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_coded_error_shows_as_text_and_structured_content() {
        let result = ToolResult::coded(CodedError::new("channel_not_found", "no channel x"));
        assert!(result.is_error);
        assert_eq!(
            result.content,
            [Content::Text("channel_not_found: no channel x".into())]
        );
        assert_eq!(
            result.structured(),
            Some(
                json!({"code": "channel_not_found", "message": "no channel x",
                        "retryable": false, "applied": "no"})
            )
        );
        assert_eq!(
            result.error.map(|e| e.code),
            Some("channel_not_found".into())
        );
    }

    #[test]
    fn a_tools_own_failure_has_no_coded_error() {
        let result = ToolResult::failure(vec![Content::Text("nope".into())], None);
        assert!(result.is_error && result.error.is_none());
        assert!(!ToolResult::success(Vec::new(), None).is_error);
    }
}
