//! An agent component compiled once, and its turns: each a fresh store and instance whose
//! imports the turn's [`Broker`] serves, dropped when the turn ends.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use wasmtime::Trap;
use wasmtime::component::InstancePre;

use super::bindings::AgentPre;
use super::bindings::agentenv::agent::types::{Completion, Failure, Prompt, Scope};
use super::broker::{Broker, Gone};
use crate::capability::agent::AgentState;
use crate::capability::wasi::{Seed, Sources};
use crate::engine::Runtime;
use crate::limits::Limits;
use crate::runner::counted::Counted;
use crate::store::StoreData;
use crate::world::{self, CompileError, World};

/// Why an agent component could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum AgentLoadError {
    /// The bytes are not a component, or not an agent (no `handler` export).
    #[error("{0}")]
    NotAnAgent(#[from] CompileError),
    /// It imports what no agent is given.
    #[error("the agent cannot be linked: {0}")]
    Link(String),
}

/// How a turn ended.
#[derive(Debug)]
pub enum TurnEnd {
    /// The guest answered ok: the `completed` terminal.
    Completed(Completion),
    /// The guest answered err, or the host failed the turn (a trap: `agent_trap`; the CPU
    /// deadline: `deadline_exceeded`; no instance: `agent_start_failed`): the `failed` terminal.
    Failed(Failure),
    /// The caller went away: no terminal is sent.
    CallerGone,
}

/// An agent component, compiled once and linked with the agent world's imports.
pub struct Agent {
    engine: wasmtime::Engine,
    pre: AgentPre<StoreData>,
    limits: Limits,
    /// The engine's count of guests running: a turn counts in it, so the epoch ticks at its
    /// fast rate and a computing guest is stopped within a tick of its caller leaving.
    running: Arc<AtomicUsize>,
}

fn failure(code: &str, details: String, retryable: bool) -> Failure {
    Failure {
        details,
        retryable,
        code: Some(code.to_owned()),
    }
}

impl Agent {
    /// Compiles `bytes` (on a blocking thread), checks that it is an agent and links it.
    ///
    /// # Errors
    /// [`AgentLoadError`], naming what is wrong.
    pub async fn from_bytes(
        runtime: &Runtime,
        bytes: Vec<u8>,
        limits: Limits,
    ) -> Result<Self, AgentLoadError> {
        let component = world::compile(&runtime.engine, bytes, World::Agent).await?;
        let pre: InstancePre<StoreData> = runtime
            .agent_linker
            .instantiate_pre(&component)
            .map_err(|e| AgentLoadError::Link(format!("{e:#}")))?;
        let pre = AgentPre::new(pre).map_err(|e| AgentLoadError::Link(format!("{e:#}")))?;
        Ok(Self {
            engine: runtime.engine.clone(),
            pre,
            limits,
            running: runtime.running.clone(),
        })
    }

    /// One turn: a fresh instance, `invoke(scope, prompt)` under the CPU deadline, its imports
    /// served by `broker`; the instance is dropped when it ends. A trap becomes `agent_trap`
    /// (the trap's kind as details, no backtrace), the deadline `deadline_exceeded`, a broker that
    /// answered [`Gone`] [`TurnEnd::CallerGone`].
    pub async fn invoke(
        &self,
        scope: &Scope,
        prompt: &Prompt,
        broker: Box<dyn Broker>,
        label: &str,
    ) -> TurnEnd {
        let (_running, _) = Counted::start(&self.running);
        let sources = Sources::new(Seed::fresh());
        sources.tape.go_live();
        let mut data = StoreData::new(label.into(), &self.limits, &sources);
        data.agent = AgentState::new(broker);
        let mut store = data.into_store(&self.engine, &self.limits, false);
        let agent = match self.pre.instantiate_async(&mut store).await {
            Ok(agent) => agent,
            Err(e) => return self.ended(e, "agent_start_failed"),
        };
        let handler = agent.agentenv_agent_handler();
        match handler.call_invoke(&mut store, scope, prompt).await {
            Ok(Ok(completion)) => TurnEnd::Completed(completion),
            Ok(Err(failed)) => TurnEnd::Failed(failed),
            Err(e) => self.ended(e, "agent_trap"),
        }
    }

    /// The end of a turn that `error` stopped.
    fn ended(&self, error: wasmtime::Error, code: &str) -> TurnEnd {
        if error.downcast_ref::<Gone>().is_some() {
            return TurnEnd::CallerGone;
        }
        if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
            return TurnEnd::Failed(failure(
                "deadline_exceeded",
                format!(
                    "the agent ran past its CPU deadline of {} ms",
                    self.limits.cpu_deadline.as_millis()
                ),
                false,
            ));
        }
        let details = match error.downcast_ref::<Trap>() {
            Some(trap) => format!("the agent trapped: {trap}"),
            None => {
                let cause = error.root_cause().to_string();
                cause
                    .lines()
                    .next()
                    .unwrap_or("the agent failed")
                    .to_owned()
            }
        };
        TurnEnd::Failed(failure(code, details, false))
    }
}
