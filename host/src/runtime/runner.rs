//! Runs an episode's calls one at a time, on a task of its own.
//!
//! Calls queue up in a bounded channel; the episode's task owns the instance and runs queued
//! calls back to back. So the guest stays busy while callers on other threads wait (no hand-over
//! of a lock between calls), a full queue refuses a call at once, and a caller that goes away (a
//! client that disconnects) never cancels a guest mid-call: the call finishes, its answer is
//! dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio::sync::oneshot;
use wasmtime::Store;

use super::bindings::agentenv::environment::types as wit;
use super::bindings::exports::agentenv::environment::env::Guest;
use super::convert;
use super::environment::{Environment, Live};
use super::episode::CallContext;
use super::error::{CallError, Fault};
use super::state::EpisodeState;
use super::threads::GuestThreads;

/// One call into the guest: the outer error is a fault, the inner one the guest's coded answer.
pub(crate) type GuestCall<'a, R> = BoxFuture<'a, wasmtime::Result<Result<R, wit::EnvError>>>;

/// A queued call, typed away.
trait Job: Send {
    /// Runs the call on `live` (counted in `running` meanwhile) and answers its caller;
    /// reports a fault so that the runner discards the instance.
    fn run<'a>(
        self: Box<Self>,
        live: &'a mut Live,
        limits: &'a super::Limits,
        running: &'a AtomicUsize,
    ) -> BoxFuture<'a, Option<Fault>>;

    /// Answers the caller with `error` without running the call.
    fn fail(self: Box<Self>, error: CallError);
}

/// Counts a call as running in a guest for as long as it lives (the epoch ticks fast while
/// any does).
struct Running<'a>(&'a AtomicUsize);

impl<'a> Running<'a> {
    fn start(running: &'a AtomicUsize) -> Self {
        running.fetch_add(1, Ordering::Relaxed);
        Self(running)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

struct Pending<R, F> {
    context: Option<CallContext>,
    call: F,
    reply: oneshot::Sender<Result<R, CallError>>,
}

impl<R, F> Job for Pending<R, F>
where
    R: Send + 'static,
    F: for<'a> FnOnce(&'a Guest, &'a mut Store<EpisodeState>) -> GuestCall<'a, R> + Send + 'static,
{
    fn run<'a>(
        self: Box<Self>,
        live: &'a mut Live,
        limits: &'a super::Limits,
        running: &'a AtomicUsize,
    ) -> BoxFuture<'a, Option<Fault>> {
        let Pending {
            context,
            call,
            reply,
        } = *self;
        Box::pin(async move {
            live.store.data_mut().call = context;
            EpisodeState::arm_deadline(&mut live.store, limits);
            let guest = live.world.agentenv_environment_env();
            let counted = Running::start(running);
            let outcome = call(guest, &mut live.store).await;
            drop(counted);
            live.store.data_mut().call = None;
            let (answer, fault) = match outcome {
                Ok(Ok(answer)) => (Ok(answer), None),
                Ok(Err(e)) => (Err(CallError::Guest(convert::coded_error(e))), None),
                Err(error) => {
                    let fault = Fault::classify(&error, limits.cpu_deadline);
                    (Err(CallError::Fault(fault.clone())), Some(fault))
                }
            };
            let _ = reply.send(answer);
            fault
        })
    }

    fn fail(self: Box<Self>, error: CallError) {
        let _ = self.reply.send(Err(error));
    }
}

/// The calls of one episode: a queue served by a task of the episode's own, which owns the
/// instance and stops (dropping it) when the episode is dropped.
pub(crate) struct Runner {
    environment: Arc<Environment>,
    jobs: mpsc::Sender<Box<dyn Job>>,
}

impl Runner {
    /// Starts, on `threads`, the task that serves `live`, an instance of `environment`
    /// labelled `label` in the log.
    pub(crate) fn new(
        environment: Arc<Environment>,
        label: String,
        live: Live,
        threads: &GuestThreads,
    ) -> Self {
        let (jobs, queue) = mpsc::channel(environment.limits().max_queued_calls.max(1));
        threads.spawn(serve(environment.clone(), label, live, queue));
        Self { environment, jobs }
    }

    /// The environment the episode is an instance of.
    pub(crate) fn environment(&self) -> &Arc<Environment> {
        &self.environment
    }

    /// Queues `call` (with `context` for the `context` import and a fresh CPU deadline) and
    /// waits for its answer, at most the call timeout; refuses it when the queue is full.
    pub(crate) async fn call<R, F>(
        &self,
        context: Option<CallContext>,
        call: F,
    ) -> Result<R, CallError>
    where
        R: Send + 'static,
        F: for<'a> FnOnce(&'a Guest, &'a mut Store<EpisodeState>) -> GuestCall<'a, R>
            + Send
            + 'static,
    {
        let limits = self.environment.limits();
        let (reply, answer) = oneshot::channel();
        let job = Box::new(Pending {
            context,
            call,
            reply,
        });
        match self.jobs.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                return Err(CallError::Busy {
                    queued: self.jobs.max_capacity(),
                });
            }
            Err(TrySendError::Closed(_)) => return Err(CallError::Stopped),
        }
        match tokio::time::timeout(limits.call_timeout, answer).await {
            Ok(answer) => answer.unwrap_or(Err(CallError::Stopped)),
            Err(_) => Err(CallError::Timeout(limits.call_timeout)),
        }
    }
}

/// Runs queued calls back to back until the episode is dropped; after a fault, the next call
/// runs on a fresh instance.
async fn serve(
    environment: Arc<Environment>,
    label: String,
    live: Live,
    mut queue: mpsc::Receiver<Box<dyn Job>>,
) {
    let limits = *environment.limits();
    let mut live = Some(live);
    while let Some(job) = queue.recv().await {
        let instance = match &mut live {
            Some(instance) => instance,
            empty => {
                tracing::info!(episode = %label, "starting a fresh instance");
                // Boxed: the instantiation future is large and rarely needed.
                match Box::pin(environment.instantiate(&label)).await {
                    Ok(instance) => empty.insert(instance),
                    Err(e) => {
                        job.fail(CallError::Instantiate(format!("{e:#}")));
                        continue;
                    }
                }
            }
        };
        if let Some(fault) = job.run(instance, &limits, environment.running()).await {
            tracing::warn!(episode = %label, %fault, "guest fault; discarding the instance");
            live = None;
        }
    }
}
