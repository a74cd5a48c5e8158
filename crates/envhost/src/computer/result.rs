//! Tool results as the contract sends them (computer.md#tools): the summary as the text
//! block, then the image when there is one, and the result as structured content with its
//! unset fields left out.

use envhost_protocol::{Content, ToolResult};
use serde_json::value::to_raw_value;
use serde_json::{Map, Value, json};

use super::state::KeptFrame;

/// `result` (its `summary` the text block) with `image` (base64, MIME type) as a tool answers.
pub fn send(result: Map<String, Value>, image: Option<(String, &'static str)>) -> ToolResult {
    let summary = result
        .get("summary")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut content = vec![Content::Text(summary)];
    if let Some((data, mime_type)) = image {
        content.push(Content::Image {
            data,
            mime_type: mime_type.to_owned(),
        });
    }
    let structured = to_raw_value(&Value::Object(result)).ok();
    ToolResult::success(content, structured)
}

/// A frame's `FrameData`: id, size, display, parent (crops only) and capture time.
pub fn frame_data(frame: &KeptFrame) -> Value {
    let mut data = Map::new();
    data.insert("frame_id".into(), json!(frame.id));
    data.insert("width".into(), json!(frame.width()));
    data.insert("height".into(), json!(frame.height()));
    data.insert(
        "display".into(),
        json!({
            "width": frame.display.width,
            "height": frame.display.height,
            "scale": frame.display.scale,
        }),
    );
    if let Some(parent) = &frame.parent_id {
        data.insert("parent_frame_id".into(), json!(parent));
    }
    data.insert("captured_at".into(), json!(frame.captured_at));
    Value::Object(data)
}
