//! The agent world's imports, served by the turn's [`Broker`]: a store's [`AgentState`] holds
//! the broker and the model answers the guest holds.

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};

use crate::agent::bindings::agentenv::agent::env_tools::{self, ToolOutput};
use crate::agent::bindings::agentenv::agent::model::{
    self, Chunk, Message, ModelError, Request, ToolSpec,
};
use crate::agent::bindings::agentenv::agent::types::Progress;
use crate::agent::bindings::agentenv::agent::{events, session, types};
use crate::agent::broker::{Broker, Gone, Response};

/// The agent imports' state in a store: the turn's broker, and the model answers held.
#[derive(Default)]
pub struct AgentState {
    broker: Option<Box<dyn Broker>>,
    responses: ResourceTable,
}

impl AgentState {
    /// The state of a turn served by `broker`.
    pub(crate) fn new(broker: Box<dyn Broker>) -> Self {
        Self {
            broker: Some(broker),
            responses: ResourceTable::new(),
        }
    }

    fn broker(&mut self) -> wasmtime::Result<&mut Box<dyn Broker>> {
        self.broker
            .as_mut()
            .ok_or_else(|| wasmtime::format_err!("no turn is being served"))
    }
}

fn gone(e: Gone) -> wasmtime::Error {
    wasmtime::Error::new(e)
}

impl types::Host for AgentState {}

impl events::Host for AgentState {
    async fn emit(&mut self, event: Progress) -> wasmtime::Result<()> {
        self.broker()?.emit(event).await.map_err(gone)
    }
}

impl model::HostResponse for AgentState {
    async fn next(
        &mut self,
        this: Resource<Response>,
    ) -> wasmtime::Result<Result<Option<Chunk>, ModelError>> {
        let response = self.responses.get_mut(&this)?;
        Ok(response.0.next().await)
    }

    async fn drop(&mut self, this: Resource<Response>) -> wasmtime::Result<()> {
        self.responses.delete(this)?;
        Ok(())
    }
}

impl model::Host for AgentState {
    async fn complete(
        &mut self,
        req: Request,
    ) -> wasmtime::Result<Result<Resource<Response>, ModelError>> {
        match self.broker()?.complete(req).await.map_err(gone)? {
            Ok(stream) => Ok(Ok(self.responses.push(Response(stream))?)),
            Err(e) => Ok(Err(e)),
        }
    }
}

impl env_tools::Host for AgentState {
    async fn list_tools(&mut self) -> wasmtime::Result<Vec<ToolSpec>> {
        self.broker()?.list_tools().await.map_err(gone)
    }

    async fn call_tool(
        &mut self,
        call_id: String,
        name: String,
        args: String,
    ) -> wasmtime::Result<Result<ToolOutput, String>> {
        self.broker()?
            .call_tool(call_id, name, args)
            .await
            .map_err(gone)
    }
}

impl session::Host for AgentState {
    async fn history(&mut self) -> wasmtime::Result<Vec<Message>> {
        self.broker()?.history().await.map_err(gone)
    }

    async fn append(&mut self, entries: Vec<Message>) -> wasmtime::Result<()> {
        self.broker()?.append(entries).await.map_err(gone)
    }
}

/// Adds the agent world's imports to `linker`, their state reached through `get`.
///
/// # Errors
/// wasmtime's, when an interface is already defined.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut AgentState,
) -> wasmtime::Result<()> {
    types::add_to_linker::<T, HasSelf<AgentState>>(linker, get)?;
    events::add_to_linker::<T, HasSelf<AgentState>>(linker, get)?;
    model::add_to_linker::<T, HasSelf<AgentState>>(linker, get)?;
    env_tools::add_to_linker::<T, HasSelf<AgentState>>(linker, get)?;
    session::add_to_linker::<T, HasSelf<AgentState>>(linker, get)
}
