//! Write an agent in Rust: a component of the `agentenv:agent` world (`wit/agent/agent.wit`)
//! that envhost runs one fresh instance of per turn (agents.md#writing-an-agent-in-rust).
//!
//! An agent is one function under [`agent`]: it takes the turn's [`Scope`] and [`Prompt`] and an
//! [`AgentContext`], through which it emits events, asks the model, calls the environment's
//! tools and reads and extends the session; it returns the terminal, a [`Completion`] or a
//! [`Failure`]. The attribute also exports the component; build it with
//! `cargo build --target wasm32-wasip2`.
//!
//! ```
//! use envhost_sdk::agent::{
//!     agent, AgentContext, Completion, Failure, Message, Prompt, Request, Scope,
//! };
//! use serde_json::json;
//!
//! /// Answers from the model with the session's history and the environment's tools offered,
//! /// running each tool call it asks for once.
//! #[agent]
//! fn invoke(scope: Scope, prompt: Prompt, cx: &mut AgentContext) -> Result<Completion, Failure> {
//!     cx.emit_extension("session", json!({"id": scope.session}))?;
//!     let mut messages = cx.history();
//!     let first_new = messages.len();
//!     messages.push(Message::user(prompt.text));
//!     let answer = cx.ask(&Request::new(messages.clone(), Vec::new()))?;
//!     let calls = answer.tool_calls.clone();
//!     messages.push(answer);
//!     for call in calls {
//!         let content = match cx.call(&call) {
//!             Ok(output) => output.content,
//!             Err(why) => why,
//!         };
//!         messages.push(Message::tool(call.id, content));
//!     }
//!     cx.append(&messages[first_new..]);
//!     Ok(Completion::with_data(json!({"steps": 1})))
//! }
//! # fn main() {}
//! ```
//!
//! Model errors become the turn's failure with `?` (`rate_limited`, `model_unavailable`,
//! `model_refused`: see [`Failure`]'s `From<ModelError>`); a panic is a trap, which the host
//! answers as `agent_trap`.

mod context;
mod event;
mod export;
mod model;
mod terminal;

/// Guest-side bindings of the `agent` world; the WIT documents every type.
#[doc(hidden)]
pub mod bindings;

pub use context::AgentContext;
pub use envhost_sdk_macros::agent;
pub use event::Event;
pub use model::Response;

pub use bindings::agentenv::agent::env_tools::ToolOutput;
pub use bindings::agentenv::agent::model::{
    Chunk, Message, ModelError, Request, Role, ToolCall, ToolSpec,
};
pub use bindings::agentenv::agent::types::{Completion, Failure, ImageRef, Prompt, Scope};
