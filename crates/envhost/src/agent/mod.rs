//! Agents (the `agentenv:agent` world, `wit/agent/agent.wit`): what the host brokers for an
//! agent component. [`model`] is the chat model: an OpenAI-compatible Chat Completions endpoint,
//! streamed (docs/agents.md#the-model).

pub mod model;
