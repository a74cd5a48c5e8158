//! [`AgentContext`]: what a turn can ask of the host (the events, the model, the environment's
//! tools and the session), through the world's imports.

use serde_json::Value;

use super::bindings::agentenv::agent::{env_tools, events, model, session};
use super::event::{self, Event};
use super::{
    Chunk, Failure, Message, ModelError, Request, Response, ToolCall, ToolOutput, ToolSpec,
};

/// The turn's handle on the host, given to the `#[agent]` function.
///
/// Every method is an import call. When the caller has gone away the host traps the guest in
/// its next one: the turn ends there, with no terminal, and nothing after it runs.
#[derive(Debug)]
pub struct AgentContext {
    _private: (),
}

impl AgentContext {
    /// The context of a turn; `#[agent]`'s export makes one per turn.
    #[doc(hidden)]
    pub fn __new() -> Self {
        Self { _private: () }
    }

    /// Sends `event` to the caller (agents.md#turns). Returns once the host has taken it; while
    /// the caller is slow to read (64 events waiting), it waits.
    pub fn emit(&mut self, event: Event) {
        events::emit(&event.into());
    }

    /// Sends the extension event `{"type": name, ...body}` to the caller; `collect` ignores it.
    ///
    /// # Errors
    /// `protocol_violation`, with nothing sent, when `name` is `completed` or `failed` or `body`
    /// is not a JSON object: return it to end the turn as the host would.
    pub fn emit_extension(&mut self, name: &str, body: Value) -> Result<(), Failure> {
        events::emit(&event::extension(name, &body)?);
        Ok(())
    }

    /// Starts a completion of `request` (agents.md#the-model) and answers its stream.
    ///
    /// # Errors
    /// The [`ModelError`] of a request the model could not start answering; `?` turns it into
    /// the turn's [`Failure`].
    pub fn complete(&mut self, request: &Request) -> Result<Response, ModelError> {
        model::complete(request).map(Response::new)
    }

    /// One model call as the standard loop makes it: `request` completed, its text and
    /// reasoning emitted as [`Event::Text`] and [`Event::Thinking`] as they arrive, and its
    /// answer as an `assistant` message (the whole text, and the tool calls it asked for).
    ///
    /// # Errors
    /// The [`ModelError`] that started or broke the stream; the events before it are sent.
    pub fn ask(&mut self, request: &Request) -> Result<Message, ModelError> {
        let mut answer = Message::assistant("");
        for chunk in self.complete(request)? {
            match chunk? {
                Chunk::Text(text) => {
                    answer.content.push_str(&text);
                    self.emit(Event::Text(text));
                }
                Chunk::Thinking(text) => self.emit(Event::Thinking(text)),
                Chunk::ToolCall(call) => answer.tool_calls.push(call),
            }
        }
        Ok(answer)
    }

    /// The tools of the environment episode the agent is bound to, as the model is offered
    /// them: each one's name, description and input JSON Schema.
    pub fn tools(&self) -> Vec<ToolSpec> {
        env_tools::list_tools()
    }

    /// Runs the tool call the model asked for, its arguments passed on as the model wrote them.
    /// The host emits `tool_started` and `tool_ended` around it (agents.md#turns).
    ///
    /// # Errors
    /// Why the call could not be made: an unknown tool, arguments that are not a JSON object.
    /// A tool's own failure is an `is_error` [`ToolOutput`].
    pub fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, String> {
        env_tools::call_tool(&call.id, &call.name, &call.args)
    }

    /// Calls the environment's tool `name` with `args` (a JSON object) as the call `id`,
    /// unique in the turn; as [`AgentContext::call`] otherwise.
    ///
    /// # Errors
    /// As [`AgentContext::call`].
    pub fn call_tool(&mut self, id: &str, name: &str, args: &Value) -> Result<ToolOutput, String> {
        env_tools::call_tool(id, name, &args.to_string())
    }

    /// Every message of the session so far, oldest first (agents.md#sessions).
    pub fn history(&self) -> Vec<Message> {
        session::history()
    }

    /// Adds `messages` at the end of the session, for the turns that follow.
    pub fn append(&mut self, messages: &[Message]) {
        session::append(messages);
    }
}
