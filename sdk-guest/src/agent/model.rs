//! The model's side of a turn: constructors of [`Message`] and [`Request`], and [`Response`],
//! a streamed answer read as an iterator of [`Chunk`]s.

use super::bindings::agentenv::agent::model;
use super::{Chunk, Message, ModelError, Request, Role, ToolSpec};

impl Message {
    /// A message of `role` with `content`, no tool calls and no call it answers.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A `system` message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A `user` message, e.g. the prompt's text.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An `assistant` message without tool calls.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A `tool` message answering the call `call_id` with `content`: the tool's content blocks
    /// as JSON text, or why the call could not be made.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            ..Self::new(Role::Tool, content)
        }
    }
}

impl Request {
    /// A request for the answer to `messages`, offering the model `tools`, with the endpoint's
    /// `max_tokens` and `temperature`.
    pub fn new(messages: Vec<Message>, tools: Vec<ToolSpec>) -> Self {
        Self {
            messages,
            tools,
            max_tokens: None,
            temperature: None,
        }
    }

    /// Caps the answer at `max_tokens`.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Samples at `temperature`.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }
}

/// A streamed answer of the model (agents.md#the-model), from
/// [`AgentContext::complete`](super::AgentContext::complete): an iterator of its chunks (text,
/// reasoning, whole tool calls) that ends after the last chunk or after the first error.
/// Dropping it aborts the request.
#[derive(Debug)]
pub struct Response(Option<model::Response>);

impl Response {
    pub(super) fn new(response: model::Response) -> Self {
        Self(Some(response))
    }
}

impl Iterator for Response {
    type Item = Result<Chunk, ModelError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.0.as_ref()?.next().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.0 = None;
        }
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_message_names_the_call_it_answers() {
        let answer = Message::tool("c1", "[]");
        assert_eq!(answer.role, Role::Tool);
        assert_eq!(answer.tool_call_id.as_deref(), Some("c1"));
        assert!(answer.tool_calls.is_empty());
        assert_eq!(Message::user("hi").tool_call_id, None);
    }

    #[test]
    fn a_request_takes_the_endpoints_defaults_unless_told() {
        let request = Request::new(vec![Message::user("hi")], Vec::new());
        assert_eq!((request.max_tokens, request.temperature), (None, None));
        let request = request.max_tokens(256).temperature(0.5);
        assert_eq!(
            (request.max_tokens, request.temperature),
            (Some(256), Some(0.5))
        );
    }
}
