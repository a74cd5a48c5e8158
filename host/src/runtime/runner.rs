//! Runs an episode's calls one at a time, each on its caller's task as far as it can, and keeps
//! the episode's journal.
//!
//! The instance and its journal sit behind a lock that calls take in turn, first come first
//! served. A call that finds the lock free runs its guest on the caller's own task; one that
//! answers within its first poll (the usual case) costs no hand-over to another task, no channel
//! and no timer. One that does not (its guest computes past a tick, or awaits the host) moves in
//! that same poll to a task of its own ([`Placement::start`]), so a caller that goes away (a
//! client that disconnects) never cancels a guest mid-call: the call finishes, its answer is
//! dropped. At most `max_queued_calls` calls wait for the lock; beyond, a call is refused at
//! once. A caller waits at most the call timeout, queueing included; a call that has not started
//! by then never runs.
//!
//! Every call that answers (with a value or a coded error) is appended to the journal. A call
//! whose guest faults is not: the instance is discarded and rebuilt at once by replaying the
//! journal, so the episode is back at its state just before the failing call. `data/reset`
//! starts the episode on a fresh instance (and a fresh journal) whose `reset` is called.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio::time::Instant;

use super::determinism::{Position, Reading, Seed, Sources};
use super::environment::{Environment, Live, Ready};
use super::episode::CallContext;
use super::error::{CallError, Fault, ReplayError};
use super::image::Image;
use super::journal::{self, Answer, Journal, Op, Outcome};
use super::threads::{GuestThreads, Placement, Started};

/// Counts one more for as long as it lives: a call running in a guest (the epoch ticks fast
/// while any does), a call admitted to an episode.
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    /// Counts one more on `count`, which had the value returned beside.
    fn start(count: &'a AtomicUsize) -> (Self, usize) {
        (Self(count), count.fetch_add(1, Ordering::Relaxed))
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What running one op gave.
struct Ran {
    outcome: Outcome,
    /// The caller context, back from the store.
    context: Option<CallContext>,
    /// The clock readings made meanwhile.
    readings: Vec<Reading>,
    /// Whether they departed from the tape's playback.
    clocks_differ: bool,
}

/// What makes an episode's instances: its environment, and the sources of its random and
/// clocks.
pub(crate) struct Maker {
    pub(crate) environment: Arc<Environment>,
    pub(crate) label: String,
    pub(crate) sources: Sources,
}

impl Maker {
    /// The maker of an episode of `environment` with `seed`, labelled `label` in the log.
    pub(crate) fn new(environment: Arc<Environment>, label: String, seed: Seed) -> Self {
        Self {
            environment,
            label,
            sources: Sources::new(seed),
        }
    }

    /// A fresh instance, live, and the clock readings it made while starting.
    pub(crate) async fn start(&self) -> Result<(Live, Vec<Reading>), CallError> {
        self.sources.tape.go_live();
        self.sources.dice.at(Position::Start);
        let live = self
            .environment
            .instantiate(&self.label, &self.sources)
            .await
            .map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
        Ok((live, self.sources.tape.take().0))
    }

    /// Runs `op`, the journal's entry `index`, on `live` with `context` for the `context`
    /// import and a fresh CPU deadline: the outcome and the clock readings made meanwhile, with
    /// whether they departed from the tape's playback, and the context back.
    async fn run(
        &self,
        live: &mut Live,
        index: usize,
        op: &Op,
        context: Option<CallContext>,
    ) -> Ran {
        live.store.data_mut().call = context;
        self.sources.dice.at(Position::Entry(index as u64));
        super::state::EpisodeState::arm_deadline(&mut live.store, self.environment.limits());
        let guest = live.world.agentenv_environment_env();
        let (counted, _) = Counted::start(self.environment.running());
        let outcome = op.run(guest, &mut live.store).await;
        drop(counted);
        let context = live.store.data_mut().call.take();
        let (readings, clocks_differ) = self.sources.tape.take();
        Ran {
            outcome,
            context,
            readings,
            clocks_differ,
        }
    }

    /// An instance of `image`, live, its monotonic clock continuing from the image's.
    pub(crate) async fn start_from(&self, image: &Image) -> Result<Live, CallError> {
        self.sources.tape.resume(image.monotonic());
        self.sources.dice.at(Position::Start);
        let live = self
            .environment
            .instantiate_from(image.ready(), &self.label, &self.sources)
            .await
            .map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
        self.sources.tape.take();
        Ok(live)
    }

    /// A fresh instance brought to the end of `journal` by replaying it, each call checked
    /// against its recorded answer and clock readings; the tape is live again afterwards.
    pub(crate) async fn replay(&self, journal: &Journal) -> Result<Live, ReplayError> {
        self.replay_from(self.environment.ready(), journal).await
    }

    /// [`Maker::replay`] into an instance of `ready`, a component derived from the
    /// environment's.
    pub(crate) async fn replay_from(
        &self,
        ready: &Ready,
        journal: &Journal,
    ) -> Result<Live, ReplayError> {
        self.sources.tape.play(&journal.start);
        self.sources.dice.at(Position::Start);
        let mut live = self
            .environment
            .instantiate_from(ready, &self.label, &self.sources)
            .await
            .map_err(|e| ReplayError::Instantiate(format!("{e:#}")))?;
        if self.sources.tape.take().1 {
            return Err(ReplayError::Start);
        }
        for (index, entry) in journal.entries().enumerate() {
            let entry = entry.map_err(|index| ReplayError::Diverged {
                index,
                op: "?".into(),
                what: "the journal cannot be decoded".into(),
            })?;
            self.sources.tape.play(&entry.readings);
            let Ran {
                outcome,
                clocks_differ,
                ..
            } = self
                .run(&mut live, index, &entry.op, entry.context.clone())
                .await;
            let diverged = |what: String| ReplayError::Diverged {
                index,
                op: entry.op.describe(),
                what,
            };
            let answer = outcome.map_err(|e| {
                let fault = Fault::classify(&e, self.environment.limits().cpu_deadline);
                diverged(format!("the guest failed: {fault}"))
            })?;
            if journal::digest(&answer) != entry.answer {
                return Err(diverged("the answer differs from the recorded one".into()));
            }
            if clocks_differ {
                return Err(diverged(
                    "the clock readings differ from the recorded ones".into(),
                ));
            }
        }
        self.sources.tape.go_live();
        Ok(live)
    }
}

/// The calls of one episode: its instance and journal behind a lock that calls take in turn.
pub(crate) struct Runner {
    environment: Arc<Environment>,
    seed: Seed,
    episode: Arc<Mutex<Episode>>,
    /// Calls waiting for the lock or holding it.
    admitted: AtomicUsize,
    placement: Placement,
}

impl Runner {
    /// The runner of `live`, made by `maker`, at the end of `journal`; calls that outlast their
    /// first poll move to `threads`.
    pub(crate) fn new(maker: Maker, live: Live, journal: Journal, threads: &GuestThreads) -> Self {
        Self {
            environment: maker.environment.clone(),
            seed: maker.sources.seed,
            episode: Arc::new(Mutex::new(Episode {
                maker,
                live: Some(live),
                journal,
            })),
            admitted: AtomicUsize::new(0),
            placement: threads.placement(),
        }
    }

    /// The environment the episode is an instance of.
    pub(crate) fn environment(&self) -> &Arc<Environment> {
        &self.environment
    }

    /// The episode's seed.
    pub(crate) fn seed(&self) -> Seed {
        self.seed
    }

    /// Runs `op` (with `context` for the `context` import) after the calls before it, waiting
    /// at most the call timeout; refuses it when `max_queued_calls` calls wait already.
    pub(crate) async fn call(
        &self,
        op: Op,
        context: Option<CallContext>,
    ) -> Result<Answer, CallError> {
        let _admitted = self.admit()?;
        let (mut episode, deadline) = self.lock().await?;
        let call = Box::pin(async move { episode.run(op, context).await });
        match self.placement.start(call).await {
            Started::Done(answer) => answer,
            Started::Moved(answer) => {
                let timeout = self.environment.limits().call_timeout;
                let deadline = deadline.unwrap_or_else(|| Instant::now() + timeout);
                match tokio::time::timeout_at(deadline, answer).await {
                    Ok(answer) => answer.unwrap_or(Err(CallError::Stopped)),
                    Err(_) => Err(CallError::Timeout(timeout)),
                }
            }
        }
    }

    /// The journal as of every call that took the lock before this one.
    pub(crate) async fn journal(&self) -> Result<Journal, CallError> {
        let _admitted = self.admit()?;
        let (mut episode, _) = self.lock().await?;
        Ok(episode.journal.share())
    }

    /// Admits one more call, unless `max_queued_calls` wait already besides the one running.
    fn admit(&self) -> Result<Counted<'_>, CallError> {
        let queued = self.environment.limits().max_queued_calls.max(1);
        let (admitted, before) = Counted::start(&self.admitted);
        if before > queued {
            return Err(CallError::Busy { queued });
        }
        Ok(admitted)
    }

    /// The episode, at once when no call holds it or waits for it; otherwise after the calls
    /// before, until the call timeout, which is then returned as the caller's deadline.
    async fn lock(&self) -> Result<(OwnedMutexGuard<Episode>, Option<Instant>), CallError> {
        if let Ok(episode) = self.episode.clone().try_lock_owned() {
            return Ok((episode, None));
        }
        let timeout = self.environment.limits().call_timeout;
        let deadline = Instant::now() + timeout;
        match tokio::time::timeout_at(deadline, self.episode.clone().lock_owned()).await {
            Ok(episode) => Ok((episode, Some(deadline))),
            Err(_) => Err(CallError::Timeout(timeout)),
        }
    }
}

/// The instance (none after a rebuild failed) and the journal that brought it where it is.
struct Episode {
    maker: Maker,
    live: Option<Live>,
    journal: Journal,
}

impl Episode {
    /// Runs `op`: `data/reset` on a fresh instance, any other op on the current one. The rare
    /// paths that instantiate (reset, rebuilds) run boxed, so the future of a call stays small
    /// (it is moved into a box of its own on every call).
    async fn run(&mut self, op: Op, context: Option<CallContext>) -> Result<Answer, CallError> {
        if matches!(op, Op::Reset) {
            Box::pin(self.reset(op)).await
        } else {
            self.call(op, context).await
        }
    }

    /// Runs `op` on the instance (rebuilding it first if an earlier rebuild failed) and
    /// journals it; after a fault, rebuilds the instance from the journal.
    async fn call(&mut self, op: Op, context: Option<CallContext>) -> Result<Answer, CallError> {
        if self.live.is_none() {
            self.live = Some(
                Box::pin(self.maker.replay(&self.journal))
                    .await
                    .map_err(CallError::Replay)?,
            );
        }
        let Some(live) = self.live.as_mut() else {
            return Err(CallError::Stopped);
        };
        let Ran {
            outcome,
            context,
            readings,
            ..
        } = self.maker.run(live, self.journal.len(), &op, context).await;
        match outcome {
            Ok(answer) => {
                let digest = journal::digest(&answer);
                self.journal.push(&op, context.as_ref(), &readings, &digest);
                answer.map_err(|e| CallError::Guest(super::convert::coded_error(e)))
            }
            Err(error) => {
                let fault = Fault::classify(&error, self.maker.environment.limits().cpu_deadline);
                tracing::warn!(episode = %self.maker.label, %fault, "guest fault; rebuilding the instance from the journal");
                self.live = None;
                Box::pin(self.rebuild()).await;
                Err(CallError::Fault(fault))
            }
        }
    }

    /// `data/reset`: a fresh instance whose `reset` answers becomes the episode, with a journal
    /// of that one call; otherwise the episode is rebuilt as it was.
    async fn reset(&mut self, op: Op) -> Result<Answer, CallError> {
        self.live = None;
        let outcome = match self.maker.start().await {
            Ok((mut fresh, start)) => {
                let Ran {
                    outcome, readings, ..
                } = self.maker.run(&mut fresh, 0, &op, None).await;
                match outcome {
                    Ok(Ok(answer)) => {
                        let digest = journal::digest(&Ok(Answer::Done));
                        self.journal = Journal::new(start);
                        self.journal.push(&op, None, &readings, &digest);
                        self.live = Some(fresh);
                        return Ok(answer);
                    }
                    Ok(Err(e)) => Err(CallError::Guest(super::convert::coded_error(e))),
                    Err(error) => Err(CallError::Fault(Fault::classify(
                        &error,
                        self.maker.environment.limits().cpu_deadline,
                    ))),
                }
            }
            Err(e) => Err(e),
        };
        self.rebuild().await;
        outcome
    }

    /// Replays the journal into a fresh instance; on failure the episode has none (the next
    /// call tries again, and answers the error if it fails again).
    async fn rebuild(&mut self) {
        match self.maker.replay(&self.journal).await {
            Ok(live) => self.live = Some(live),
            Err(e) => {
                tracing::error!(episode = %self.maker.label, error = %e, "cannot rebuild the episode from its journal")
            }
        }
    }
}
