//! The fixture MCP's conformance suite (`@modelcontextprotocol/conformance`, scenarios of its
//! default server suite) runs against: the tools, resources and prompts each scenario names,
//! answering as each scenario expects. Tools return results verbatim (`ToolResult`), report
//! progress, write log records and ask the client (sampling, elicitation); resources,
//! templates, prompts and completions are served through the `#[mcp]` handler. `describe_me`
//! changes its own description for the episode (`update_tool`).

use envhost_sdk::{
    ContentBlock, EnvError, ImageContent, ToolResult, client, environment, log, progress,
};
use serde_json::{Value, json};

/// A 1×1 red PNG, base64-encoded.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV of eight silent 8-bit samples at 8 kHz, base64-encoded.
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// The fixture keeps no state.
#[derive(Default)]
pub struct Everything;

fn result(content: Vec<ContentBlock>) -> ToolResult {
    ToolResult {
        content,
        structured_content: None,
        is_error: false,
        meta: None,
    }
}

fn text(text: &str) -> ContentBlock {
    ContentBlock::Text(text.into())
}

fn block(value: Value) -> ContentBlock {
    ContentBlock::Block(value.to_string())
}

fn png() -> ContentBlock {
    block(json!({"type": "image", "data": PNG, "mimeType": "image/png"}))
}

fn resource(uri: &str, mime_type: &str, text: &str) -> Value {
    json!({"uri": uri, "mimeType": mime_type, "text": text})
}

#[environment(name = "everything")]
impl Everything {
    /// Changes this tool's own description for the episode, as the reference's `update_tool`.
    #[tool(name = "describe_me")]
    fn describe_me(
        &self,
        #[arg(description = "The new description.")] description: String,
    ) -> Result<String, EnvError> {
        envhost_sdk::update_tool("describe_me", &description)?;
        Ok(description)
    }

    /// Answers one text block.
    #[tool(name = "test_simple_text")]
    fn simple_text(&self) -> ToolResult {
        result(vec![text("This is a simple text response for testing.")])
    }

    /// Answers a 1×1 PNG.
    #[tool(name = "test_image_content")]
    fn image_content(&self) -> ToolResult {
        result(vec![ContentBlock::Image(ImageContent {
            data: decode_base64(PNG),
            mime_type: "image/png".into(),
        })])
    }

    /// Answers a short WAV.
    #[tool(name = "test_audio_content")]
    fn audio_content(&self) -> ToolResult {
        result(vec![block(
            json!({"type": "audio", "data": WAV, "mimeType": "audio/wav"}),
        )])
    }

    /// Answers an embedded text resource.
    #[tool(name = "test_embedded_resource")]
    fn embedded_resource(&self) -> ToolResult {
        let embedded = resource(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        );
        result(vec![block(
            json!({"type": "resource", "resource": embedded}),
        )])
    }

    /// Answers text, an image and an embedded resource.
    #[tool(name = "test_multiple_content_types")]
    fn multiple_content_types(&self) -> ToolResult {
        let embedded = resource(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        );
        result(vec![
            text("Multiple content types test:"),
            png(),
            block(json!({"type": "resource", "resource": embedded})),
        ])
    }

    /// Writes three info records while it runs.
    #[tool(name = "test_tool_with_logging")]
    fn tool_with_logging(&self) -> String {
        log::info("Tool execution started");
        log::info("Tool processing data");
        log::info("Tool execution completed");
        "Tool with logging executed successfully".into()
    }

    /// Reports progress 0, 50 and 100 out of 100.
    #[tool(name = "test_tool_with_progress")]
    fn tool_with_progress(&self) -> String {
        for step in [0.0, 50.0, 100.0] {
            progress::report(step, Some(100.0));
        }
        "Tool with progress executed successfully".into()
    }

    /// Always fails, with its own text.
    #[tool(name = "test_error_handling")]
    fn error_handling(&self) -> ToolResult {
        ToolResult {
            is_error: true,
            ..result(vec![text(
                "This tool intentionally returns an error for testing",
            )])
        }
    }

    /// Asks the client's model to answer `prompt`.
    #[tool(name = "test_sampling")]
    fn sampling(
        &self,
        #[arg(description = "The prompt to send to the LLM.")] prompt: String,
    ) -> ToolResult {
        answered(client::sample(&prompt, 100).map(|sampled| {
            let text = sampled
                .pointer("/content/text")
                .and_then(Value::as_str)
                .unwrap_or_default();
            format!("LLM response: {text}")
        }))
    }

    /// Asks the client's user for a username and an email.
    #[tool(name = "test_elicitation")]
    fn elicitation(
        &self,
        #[arg(description = "The message to show the user.")] message: String,
    ) -> ToolResult {
        let schema = json!({"type": "object", "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}},
            "required": ["username", "email"]});
        answered(client::elicit(&message, &schema).map(|answer| format!("User response: {answer}")))
    }

    /// Asks the client's user for values of every primitive type, each with a default.
    #[tool(name = "test_elicitation_sep1034_defaults")]
    fn elicitation_defaults(&self) -> ToolResult {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}},
            "required": []});
        elicited(client::elicit("Please provide your details", &schema))
    }

    /// Asks the client's user to choose from enums of each of the five shapes.
    #[tool(name = "test_elicitation_sep1330_enums")]
    fn elicitation_enums(&self) -> ToolResult {
        let titled = |pairs: &[(&str, &str)]| -> Vec<Value> {
            pairs
                .iter()
                .map(|(value, title)| json!({"const": value, "title": title}))
                .collect()
        };
        let schema = json!({"type": "object", "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": titled(&[
                ("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array",
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": titled(&[
                ("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])}}},
            "required": []});
        elicited(client::elicit("Please choose", &schema))
    }

    /// Resources, templates, prompts and completions.
    #[mcp]
    fn mcp(&mut self, method: &str, params: Value) -> Result<Value, EnvError> {
        let arg = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default();
        Ok(match method {
            "resources/list" => json!({"resources": [
                {"uri": "test://static-text", "name": "static-text",
                 "description": "A static text resource", "mimeType": "text/plain"},
                {"uri": "test://static-binary", "name": "static-binary",
                 "description": "A static binary resource", "mimeType": "image/png"},
                {"uri": "test://watched-resource", "name": "watched-resource",
                 "description": "A resource to subscribe to", "mimeType": "text/plain"},
            ]}),
            "resources/templates/list" => json!({"resourceTemplates": [
                {"uriTemplate": "test://template/{id}/data", "name": "template",
                 "description": "Data for an id", "mimeType": "application/json"},
            ]}),
            "resources/read" => json!({"contents": [read(arg("uri"))?]}),
            "prompts/list" => json!({"prompts": [
                {"name": "test_simple_prompt", "description": "A prompt without arguments"},
                {"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
                 "arguments": [
                    {"name": "arg1", "description": "The first argument", "required": true},
                    {"name": "arg2", "description": "The second argument", "required": true}]},
                {"name": "test_prompt_with_embedded_resource",
                 "description": "A prompt embedding a resource",
                 "arguments": [{"name": "resourceUri", "description": "The resource's URI",
                                "required": true}]},
                {"name": "test_prompt_with_image", "description": "A prompt with an image"},
            ]}),
            "prompts/get" => prompt(
                arg("name"),
                params.get("arguments").cloned().unwrap_or_default(),
            )?,
            "completion/complete" => {
                let typed = params
                    .pointer("/argument/value")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let values: Vec<&str> = ["paris", "park", "party"]
                    .into_iter()
                    .filter(|v| v.starts_with(typed))
                    .collect();
                json!({"completion": {"values": values, "total": values.len(), "hasMore": false}})
            }
            other => {
                return Err(EnvError::new(
                    "method_not_found",
                    format!("{other} is not served"),
                ));
            }
        })
    }
}

/// A text result of `answer`, or an error result with the client's error.
fn answered(answer: Result<String, client::ClientError>) -> ToolResult {
    match answer {
        Ok(text) => result(vec![ContentBlock::Text(text)]),
        Err(e) => ToolResult {
            is_error: true,
            ..result(vec![ContentBlock::Text(format!("the client refused: {e}"))])
        },
    }
}

/// The text result of an elicitation: its action and content.
fn elicited(answer: Result<Value, client::ClientError>) -> ToolResult {
    answered(answer.map(|answer| {
        let action = answer
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("cancel");
        let content = answer.get("content").cloned().unwrap_or(json!({}));
        format!("Elicitation completed: action={action}, content={content}")
    }))
}

/// Decodes standard base64 (the fixture's own constants; padding ignored).
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|chunk| {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
            let bytes = n.to_be_bytes();
            bytes[1..chunk.len()].to_vec()
        })
        .collect()
}

/// The contents of resource `uri`.
fn read(uri: &str) -> Result<Value, EnvError> {
    Ok(match uri {
        "test://static-text" => resource(
            uri,
            "text/plain",
            "This is the content of the static text resource.",
        ),
        "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
        "test://watched-resource" => resource(uri, "text/plain", "Watched resource content."),
        _ => match uri
            .strip_prefix("test://template/")
            .and_then(|rest| rest.strip_suffix("/data"))
        {
            Some(id) if !id.is_empty() && !id.contains('/') => {
                let data =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                resource(uri, "application/json", &data.to_string())
            }
            _ => {
                return Err(EnvError::new(
                    "resource_not_found",
                    format!("Resource {uri} not found"),
                ));
            }
        },
    })
}

/// Prompt `name` with `arguments`.
fn prompt(name: &str, arguments: Value) -> Result<Value, EnvError> {
    let user = |content: Value| json!({"role": "user", "content": content});
    let text = |text: &str| json!({"type": "text", "text": text});
    let argument = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                EnvError::new(
                    "invalid_params",
                    format!("prompt {name} needs the argument {key}"),
                )
            })
    };
    let messages = match name {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
        "test_prompt_with_arguments" => {
            let (arg1, arg2) = (argument("arg1")?, argument("arg2")?);
            vec![user(text(&format!(
                "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
            )))]
        }
        "test_prompt_with_embedded_resource" => {
            let uri = argument("resourceUri")?;
            let embedded = resource(&uri, "text/plain", "Embedded resource content for testing.");
            vec![
                user(json!({"type": "resource", "resource": embedded})),
                user(text("Please process the embedded resource above.")),
            ]
        }
        "test_prompt_with_image" => vec![
            user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
            user(text("Please analyze the image above.")),
        ],
        _ => {
            return Err(EnvError::new(
                "invalid_params",
                format!("Unknown prompt: {name}"),
            ));
        }
    };
    Ok(json!({"messages": messages}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_png_decodes_to_a_png() {
        let bytes = decode_base64(PNG);
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(decode_base64("aGk="), b"hi");
    }
}
