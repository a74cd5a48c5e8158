//! An episode's instance and the journal that brought it where it is: ops run on the instance
//! and journaled; after a fault, the instance is rebuilt from the journal; `data/reset` starts
//! over on a fresh instance and a fresh journal.

use std::sync::Arc;

use super::maker::{Maker, Ran};
use crate::call::{CallContext, Peer};
use crate::capability::wasi::Seed;
use crate::environment::{Environment, Live};
use crate::error::{CallError, Fault};
use crate::journal::{Answer, Journal, Op};

/// The instance (none after a rebuild failed) and the journal that brought it where it is.
pub(super) struct Replayable {
    maker: Maker,
    live: Option<Live>,
    journal: Journal,
}

impl Replayable {
    /// The tool descriptions the episode's guest changed.
    pub(super) fn descriptions(&self) -> crate::capability::serving::Descriptions {
        self.maker.descriptions.clone()
    }

    /// `live`, made by `maker`, at the end of `journal`.
    pub(super) fn new(maker: Maker, live: Live, journal: Journal) -> Self {
        Self {
            maker,
            live: Some(live),
            journal,
        }
    }

    /// The environment the instance is of.
    pub(super) fn environment(&self) -> &Arc<Environment> {
        &self.maker.environment
    }

    /// The seed of the instance's WASI random.
    pub(super) fn seed(&self) -> Seed {
        self.maker.sources.seed
    }

    /// A copy of the journal that shares its entries ([`Journal::share`]).
    pub(super) fn share_journal(&mut self) -> Journal {
        self.journal.share()
    }

    /// Runs `op`: `data/reset` on a fresh instance, any other op on the current one. The rare
    /// paths that instantiate (reset, rebuilds) run boxed, so the future of a call stays small
    /// (it is moved into a box of its own on every call).
    pub(super) async fn run(
        &mut self,
        op: Op,
        context: Option<CallContext>,
        peer: Option<Arc<dyn Peer>>,
    ) -> Result<Answer, CallError> {
        if matches!(op, Op::Reset) {
            Box::pin(self.reset(op)).await
        } else {
            self.call(op, context, peer).await
        }
    }

    /// Runs `op` on the instance (rebuilding it first if an earlier rebuild failed) and
    /// journals it; after a fault, rebuilds the instance from the journal.
    async fn call(
        &mut self,
        op: Op,
        context: Option<CallContext>,
        peer: Option<Arc<dyn Peer>>,
    ) -> Result<Answer, CallError> {
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
            exchanges,
            cancelled,
            ..
        } = self
            .maker
            .run(live, self.journal.len(), &op, context, peer, None)
            .await;
        match outcome {
            Ok(answer) => {
                let digest = self.journal.digest(&answer);
                let journal = &mut self.journal;
                journal.push(&op, context.as_ref(), &readings, &digest, &exchanges);
                answer.map_err(|e| CallError::Guest(crate::convert::coded_error(e)))
            }
            Err(error) => {
                let said = live.store.data().wasi.stderr().last_line();
                let deadline = self.maker.environment.limits().cpu_deadline;
                let fault = if cancelled {
                    Fault::Cancelled
                } else {
                    Fault::classify(&error, deadline, said)
                };
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
                } = self.maker.run(&mut fresh, 0, &op, None, None, None).await;
                match outcome {
                    Ok(Ok(answer)) => {
                        self.journal = Journal::new(start);
                        let digest = self.journal.digest(&Ok(Answer::Done));
                        self.journal.push(&op, None, &readings, &digest, &[]);
                        self.live = Some(fresh);
                        return Ok(answer);
                    }
                    Ok(Err(e)) => Err(CallError::Guest(crate::convert::coded_error(e))),
                    Err(error) => Err(CallError::Fault(Fault::classify(
                        &error,
                        self.maker.environment.limits().cpu_deadline,
                        fresh.store.data().wasi.stderr().last_line(),
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
