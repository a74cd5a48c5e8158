//! Agents (the `agentenv:agent` world, `wit/agent/agent.wit`): what the host brokers for an
//! agent component. [`model`] is the chat model: an OpenAI-compatible Chat Completions endpoint,
//! streamed (docs/agents.md#the-model); [`sessions`] keeps each session's history
//! (docs/agents.md#sessions); [`toolbox`] holds the tools a turn is given, of episodes and of
//! MCP servers ([`remote_mcp`]); [`turn`] runs one turn of an agent bound to an episode, its
//! [`events`] streamed (docs/agents.md#turns) as [`AgentEvents`]. [`Host::invoke`](crate::Host::invoke)
//! starts a turn in process.

pub mod events;
mod invocation;
pub mod model;
pub mod remote_mcp;
pub mod sessions;
mod stream;
pub mod toolbox;
pub mod turn;

pub use events::AgentEvent;
pub use invocation::{Image, Prompt, Scope};
pub use stream::{AgentEvents, AgentFailure, Collected};
pub use toolbox::{ToolServer, Toolbox};
