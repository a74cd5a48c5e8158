//! Agents: components of the `agent` world (`wit/agent`). An [`Agent`] is a component compiled
//! once; each invoke is a fresh instance whose imports are served by a [`Broker`] the caller
//! gives (the events sink, the model, the bound episode's tools, the session's history).

pub mod bindings;
pub mod broker;
mod component;

pub use crate::capability::agent::AgentState;
pub use broker::{Broker, Gone, ModelStream, Response};
pub use component::{Agent, AgentLoadError, TurnEnd};
