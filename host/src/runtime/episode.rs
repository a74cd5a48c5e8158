//! An episode: one live instance of an environment, called one call at a time.

use std::sync::Arc;

use super::bindings::ToolResult;
use super::bindings::agentenv::environment::types as wit;
use super::convert;
use super::environment::Environment;
use super::error::CallError;
use super::runner::Runner;
use super::threads::GuestThreads;
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

/// One live instance of an environment. Calls are serialised (run back to back by a task of
/// the episode's own, so a caller that goes away never cancels a guest mid-call); a call whose
/// guest faults discards the instance, and the next call runs on a fresh one.
pub struct Episode {
    runner: Runner,
}

impl Episode {
    /// Instantiates `environment` for a new episode, labelled `label` in the log, whose calls
    /// run on `threads`.
    ///
    /// # Errors
    /// [`CallError::Instantiate`] when instantiation fails.
    pub async fn new(
        environment: Arc<Environment>,
        label: String,
        threads: &GuestThreads,
    ) -> Result<Self, CallError> {
        let live = environment
            .instantiate(&label)
            .await
            .map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
        Ok(Self {
            runner: Runner::new(environment, label, live, threads),
        })
    }

    /// The environment this is an episode of.
    pub fn environment(&self) -> &Arc<Environment> {
        self.runner.environment()
    }

    /// `data/reset`.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn reset(&self) -> Result<(), CallError> {
        self.runner
            .call(None, |guest, store| Box::pin(guest.call_reset(store)))
            .await
    }

    /// `data/add` of parts whose files the host already resolved to bytes.
    ///
    /// # Errors
    /// [`CallError`] as the guest failed.
    pub async fn add_data(&self, parts: Vec<wit::Part>) -> Result<(), CallError> {
        self.runner
            .call(None, move |guest, store| {
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
            .runner
            .call(None, |guest, store| Box::pin(guest.call_get_data(store)))
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
        self.runner
            .call(Some(context), move |guest, store| {
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
        self.runner
            .call(Some(context), move |guest, store| {
                Box::pin(async move { guest.call_call_extension(store, &uri, &op, &request).await })
            })
            .await
    }
}
