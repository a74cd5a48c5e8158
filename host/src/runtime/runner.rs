//! Runs an episode's calls one at a time, on a task of its own.
//!
//! Calls queue up; the first call into an idle episode spawns a runner task, which runs queued
//! calls back to back until none is left. So the guest stays busy while callers on other
//! threads wait (no hand-over of a lock between each call), and a caller that goes away (a client
//! that disconnects) never cancels a guest mid-call: the call finishes, its answer is dropped.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::future::BoxFuture;
use tokio::sync::oneshot;
use wasmtime::Store;

use super::bindings::agentenv::environment::types as wit;
use super::bindings::exports::agentenv::environment::env::Guest;
use super::convert;
use super::environment::{Environment, Live};
use super::episode::CallContext;
use super::error::{CallError, Fault};
use super::state::EpisodeState;

/// One call into the guest: the outer error is a fault, the inner one the guest's coded answer.
pub(crate) type GuestCall<'a, R> = BoxFuture<'a, wasmtime::Result<Result<R, wit::EnvError>>>;

/// A queued call, typed away.
trait Job: Send {
    /// Runs the call on `live` and answers its caller; reports a fault so that the runner
    /// discards the instance.
    fn run<'a>(
        self: Box<Self>,
        live: &'a mut Live,
        limits: &'a super::Limits,
    ) -> BoxFuture<'a, Option<Fault>>;

    /// Answers the caller with `error` without running the call.
    fn fail(self: Box<Self>, error: CallError);
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
    ) -> BoxFuture<'a, Option<Fault>> {
        let Pending {
            context,
            call,
            reply,
        } = *self;
        Box::pin(async move {
            let state = live.store.data_mut();
            state.call = context;
            state.ticks_left = limits.deadline_ticks();
            live.store.set_epoch_deadline(1);
            let guest = live.world.agentenv_environment_env();
            let outcome = call(guest, &mut live.store).await;
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

struct Queue {
    jobs: VecDeque<Box<dyn Job>>,
    /// Whether a runner task is draining the queue.
    running: bool,
}

/// The calls of one episode, and its instance between calls.
pub(crate) struct Runner {
    environment: Arc<Environment>,
    label: String,
    /// The instance while no runner holds it; none after a fault, until the next call.
    idle: Mutex<Option<Live>>,
    queue: Mutex<Queue>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Runner {
    /// A runner for `live`, an instance of `environment` labelled `label` in the log.
    pub(crate) fn new(environment: Arc<Environment>, label: String, live: Live) -> Self {
        Self {
            environment,
            label,
            idle: Mutex::new(Some(live)),
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                running: false,
            }),
        }
    }

    /// The environment the episode is an instance of.
    pub(crate) fn environment(&self) -> &Arc<Environment> {
        &self.environment
    }

    /// Queues `call` (with `context` for the `context` import and a fresh CPU deadline) and
    /// waits for its answer, at most the call timeout; refuses it when the queue is full.
    pub(crate) async fn call<R, F>(
        self: &Arc<Self>,
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
        let start = {
            let mut queue = lock(&self.queue);
            if queue.running && queue.jobs.len() >= limits.max_queued_calls {
                return Err(CallError::Busy {
                    queued: queue.jobs.len(),
                });
            }
            queue.jobs.push_back(Box::new(Pending {
                context,
                call,
                reply,
            }));
            !std::mem::replace(&mut queue.running, true)
        };
        if start {
            tokio::spawn(self.clone().drain());
        }
        match tokio::time::timeout(limits.call_timeout, answer).await {
            Ok(answer) => answer.unwrap_or(Err(CallError::Stopped)),
            Err(_) => Err(CallError::Timeout(limits.call_timeout)),
        }
    }

    /// Runs queued calls until none is left, then hands the instance back and stops.
    async fn drain(self: Arc<Self>) {
        let mut live = lock(&self.idle).take();
        let limits = *self.environment.limits();
        loop {
            let job = {
                let mut queue = lock(&self.queue);
                match queue.jobs.pop_front() {
                    Some(job) => job,
                    None => {
                        *lock(&self.idle) = live;
                        queue.running = false;
                        return;
                    }
                }
            };
            let instance = match &mut live {
                Some(instance) => instance,
                empty => {
                    tracing::info!(episode = %self.label, "starting a fresh instance");
                    match self.environment.instantiate(&self.label).await {
                        Ok(instance) => empty.insert(instance),
                        Err(e) => {
                            job.fail(CallError::Instantiate(format!("{e:#}")));
                            continue;
                        }
                    }
                }
            };
            if let Some(fault) = job.run(instance, &limits).await {
                tracing::warn!(episode = %self.label, %fault, "guest fault; discarding the instance");
                live = None;
            }
        }
    }
}
