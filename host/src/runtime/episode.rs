//! An episode: one live instance of an environment, called one call at a time.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::Mutex;
use wasmtime::Store;

use super::bindings::ToolResult;
use super::bindings::agentenv::environment::types as wit;
use super::convert;
use super::environment::{Environment, Live};
use super::error::{CallError, Fault};
use super::state::EpisodeState;
use crate::protocol::error::CodedError;
use crate::protocol::part::Part;
use crate::protocol::role::Caller;

/// The tool or extension call being served, as the guest's `context.current()` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallContext {
    /// Who is calling.
    pub caller: Caller,
    /// The tool's name as served; for an extension, `<uri>#<op>`.
    pub tool: String,
    /// The arguments as received, as JSON text.
    pub arguments: String,
    /// 32 lowercase hex digits, fresh per call.
    pub call_id: String,
}

impl CallContext {
    /// A context with a fresh call id.
    pub fn new(caller: Caller, tool: String, arguments: String) -> Self {
        Self {
            caller,
            tool,
            arguments,
            call_id: uuid::Uuid::new_v4().simple().to_string(),
        }
    }
}

/// The guest's exports.
type Guest = super::bindings::exports::agentenv::environment::environment::Guest;

/// One call into the guest: the outer error is a fault, the inner one the guest's coded answer.
type GuestCall<'a, R> = BoxFuture<'a, wasmtime::Result<Result<R, wit::EnvError>>>;

/// One live instance of an environment. Calls are serialised; a call whose guest faults
/// discards the instance, and the next call runs on a fresh one.
pub struct Episode {
    environment: Arc<Environment>,
    label: String,
    live: Mutex<Option<Live>>,
}

impl Episode {
    /// Instantiates `environment` for a new episode, labelled `label` in the log.
    ///
    /// # Errors
    /// [`CallError::Instantiate`] when instantiation fails.
    pub async fn new(environment: Arc<Environment>, label: String) -> Result<Self, CallError> {
        let live = environment
            .instantiate(&label)
            .await
            .map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
        Ok(Self {
            environment,
            label,
            live: Mutex::new(Some(live)),
        })
    }

    /// The environment this is an episode of.
    pub fn environment(&self) -> &Arc<Environment> {
        &self.environment
    }

    /// `data/reset`.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn reset(&self) -> Result<(), CallError> {
        self.invoke(None, |guest, store| Box::pin(guest.call_reset(store)))
            .await
    }

    /// `data/add` of parts whose files the host already resolved to bytes.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn add_data(&self, parts: Vec<wit::Part>) -> Result<(), CallError> {
        self.invoke(None, move |guest, store| {
            Box::pin(async move { guest.call_add_data(store, &parts).await })
        })
        .await
    }

    /// `data/get`.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed, or `invalid_part` when it answers a data part that is
    /// not a JSON object.
    pub async fn get_data(&self) -> Result<Vec<Part>, CallError> {
        let parts = self
            .invoke(None, |guest, store| Box::pin(guest.call_get_data(store)))
            .await?;
        parts
            .into_iter()
            .map(convert::part_from_guest)
            .collect::<Result<_, _>>()
            .map_err(|m| CallError::Guest(CodedError::new("invalid_part", m)))
    }

    /// Calls the tool the guest declared as `declared_name` with `arguments` (a JSON object as
    /// text, already validated), on behalf of `context`.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn call_tool(
        &self,
        declared_name: &str,
        arguments: String,
        context: CallContext,
    ) -> Result<ToolResult, CallError> {
        let name = declared_name.to_owned();
        self.invoke(Some(context), move |guest, store| {
            Box::pin(async move { guest.call_call_tool(store, &name, &arguments).await })
        })
        .await
    }

    /// Calls method `op` of extension `uri` with `request` (a JSON object as text, already
    /// bound and coerced); answers JSON text.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn call_extension(
        &self,
        uri: &str,
        op: &str,
        request: String,
        context: CallContext,
    ) -> Result<String, CallError> {
        let (uri, op) = (uri.to_owned(), op.to_owned());
        self.invoke(Some(context), move |guest, store| {
            Box::pin(async move { guest.call_call_extension(store, &uri, &op, &request).await })
        })
        .await
    }

    /// Runs `call` on the live instance (a fresh one if the last faulted), with `context` for
    /// the `context` import and a fresh CPU deadline.
    async fn invoke<R>(
        &self,
        context: Option<CallContext>,
        call: impl for<'a> FnOnce(&'a Guest, &'a mut Store<EpisodeState>) -> GuestCall<'a, R>,
    ) -> Result<R, CallError> {
        let mut guard = self.live.lock().await;
        let live = match &mut *guard {
            Some(live) => live,
            empty => {
                tracing::info!(episode = %self.label, "starting a fresh instance");
                let live = self
                    .environment
                    .instantiate(&self.label)
                    .await
                    .map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
                empty.insert(live)
            }
        };
        let state = live.store.data_mut();
        state.call = context;
        state.ticks_left = self.environment.limits().deadline_ticks();
        live.store.set_epoch_deadline(1);
        let outcome = call(
            live.world.agentenv_environment_environment(),
            &mut live.store,
        )
        .await;
        live.store.data_mut().call = None;
        match outcome {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(CallError::Guest(convert::coded_error(e))),
            Err(error) => {
                let fault = Fault::classify(&error, self.environment.limits().cpu_deadline);
                tracing::warn!(episode = %self.label, %fault, "guest fault; discarding the instance");
                *guard = None;
                Err(CallError::Fault(fault))
            }
        }
    }
}
