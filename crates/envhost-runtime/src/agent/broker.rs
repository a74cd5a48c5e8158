//! What serves an agent instance's imports: a [`Broker`], given by the caller of each invoke.
//! The runtime knows no HTTP, no model provider and no episode; the broker does.

use std::future::Future;
use std::pin::Pin;

use super::bindings::agentenv::agent::env_tools::ToolOutput;
use super::bindings::agentenv::agent::model::{Chunk, Message, ModelError, Request, ToolSpec};
use super::bindings::agentenv::agent::types::Progress;

/// A boxed future that is `Send`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The caller of the turn has gone away: the guest is trapped at the import that learnt it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the caller of the turn has gone away")]
pub struct Gone;

/// A model's streamed answer.
pub trait ModelStream: Send {
    /// The next chunk; `None` once the answer has ended.
    fn next(&mut self) -> BoxFuture<'_, Result<Option<Chunk>, ModelError>>;
}

/// A completion started, or the model's error.
pub type Completed = Result<Box<dyn ModelStream>, ModelError>;

/// A model answer the guest holds (`model.response`).
pub struct Response(pub Box<dyn ModelStream>);

/// Serves one turn's imports. Every method may answer [`Gone`], which traps the guest: the
/// instance is then dropped and no terminal is sent.
pub trait Broker: Send {
    /// A non-terminal event of the turn, taken by the caller (waiting while it is slow to read).
    fn emit(&mut self, event: Progress) -> BoxFuture<'_, Result<(), Gone>>;

    /// Starts a model completion.
    fn complete(&mut self, request: Request) -> BoxFuture<'_, Result<Completed, Gone>>;

    /// The bound episode's tools.
    fn list_tools(&mut self) -> BoxFuture<'_, Result<Vec<ToolSpec>, Gone>>;

    /// Calls the bound episode's tool `name` with `args` (JSON text) as call `call_id`; the
    /// broker emits `tool_started` and `tool_ended` around it.
    fn call_tool(
        &mut self,
        call_id: String,
        name: String,
        args: String,
    ) -> BoxFuture<'_, Result<Result<ToolOutput, String>, Gone>>;

    /// The session's messages, oldest first.
    fn history(&mut self) -> BoxFuture<'_, Result<Vec<Message>, Gone>>;

    /// Adds messages to the session.
    fn append(&mut self, entries: Vec<Message>) -> BoxFuture<'_, Result<(), Gone>>;
}
