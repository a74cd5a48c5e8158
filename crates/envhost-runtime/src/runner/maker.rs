//! What makes an episode's instances, and runs one op on an instance with the episode's random,
//! clocks and caller context: fresh, replayed from a journal, or from a pre-initialised image.

use std::sync::Arc;

use super::counted::Counted;
use crate::call::{CallContext, Exchange, Peer};
use crate::capability::serving::{Descriptions, Serving};
use crate::capability::wasi::{Position, Reading, Seed, Sources};
use crate::environment::{Environment, Live, Ready};
use crate::error::{CallError, Fault, ReplayError};
use crate::journal::{Journal, Op, Outcome};
use crate::store::StoreData;

/// What running one op gave.
pub(super) struct Ran {
    pub(super) outcome: Outcome,
    /// The caller context, back from the store.
    pub(super) context: Option<CallContext>,
    /// The clock readings made meanwhile.
    pub(super) readings: Vec<Reading>,
    /// Whether they departed from the tape's playback.
    pub(super) clocks_differ: bool,
    /// What the caller answered the guest's requests meanwhile.
    pub(super) exchanges: Vec<Exchange>,
    /// Whether the caller cancelled the call while it ran.
    pub(super) cancelled: bool,
}

/// What makes an episode's instances: its environment, and the sources of its random and
/// clocks.
pub(super) struct Maker {
    pub(super) environment: Arc<Environment>,
    pub(super) label: String,
    pub(super) sources: Sources,
    /// The episode's tool descriptions as its guest changed them, shared by its instances.
    pub(super) descriptions: Descriptions,
    /// The environment's tools' declared names.
    declared: Arc<[String]>,
}

impl Maker {
    /// The maker of an episode of `environment` with `seed`, labelled `label` in the log.
    pub(super) fn new(environment: Arc<Environment>, label: String, seed: Seed) -> Self {
        let declared = environment
            .description()
            .tools
            .iter()
            .map(|t| t.declared_name.clone())
            .collect();
        Self {
            environment,
            label,
            sources: Sources::new(seed),
            descriptions: Descriptions::default(),
            declared,
        }
    }

    /// `live`, its `serving` capability sharing the episode's descriptions.
    fn attached(&self, mut live: Live) -> Live {
        live.store.data_mut().serving =
            Serving::new(self.descriptions.clone(), self.declared.clone());
        live
    }

    /// A fresh instance, live, and the clock readings it made while starting.
    pub(super) async fn start(&self) -> Result<(Live, Vec<Reading>), CallError> {
        self.sources.tape.go_live();
        self.sources.dice.at(Position::Start);
        let live = self
            .environment
            .instantiate(&self.label, &self.sources)
            .await
            .map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
        Ok((self.attached(live), self.sources.tape.take().0))
    }

    /// Runs `op`, the journal's entry `index`, on `live` with `context` for the `context`
    /// import, `peer` for its progress, log records and requests (or, in a replay, `played`,
    /// the requests' recorded answers), and a fresh CPU deadline: the outcome and the clock
    /// readings made meanwhile, with whether they departed from the tape's playback, the
    /// requests' answers, and the context back.
    pub(super) async fn run(
        &self,
        live: &mut Live,
        index: usize,
        op: &Op,
        context: Option<CallContext>,
        peer: Option<Arc<dyn Peer>>,
        played: Option<Vec<Exchange>>,
    ) -> Ran {
        live.store.data_mut().context.set(context);
        live.store.data_mut().context.set_peer(peer);
        live.store.data_mut().context.play(played);
        self.sources.dice.at(Position::Entry(index as u64));
        StoreData::arm_deadline(&mut live.store, self.environment.limits());
        let guest = live.world.agentenv_environment_env();
        let (counted, _) = Counted::start(self.environment.running());
        let outcome = op.run(guest, &mut live.store).await;
        drop(counted);
        let cancelled = live.store.data().context.cancelled();
        let context = live.store.data_mut().context.take();
        live.store.data_mut().context.set_peer(None);
        let exchanges = live.store.data_mut().context.take_recorded();
        let (readings, clocks_differ) = self.sources.tape.take();
        Ran {
            outcome,
            context,
            readings,
            clocks_differ,
            exchanges,
            cancelled,
        }
    }

    /// An instance of `ready`, a pre-initialised image whose last monotonic clock reading was
    /// `monotonic` nanoseconds, live, its monotonic clock continuing from there.
    pub(super) async fn start_from(
        &self,
        ready: &Ready,
        monotonic: u64,
    ) -> Result<Live, CallError> {
        self.sources.tape.resume(monotonic);
        self.sources.dice.at(Position::Start);
        let live = self
            .environment
            .instantiate_from(ready, &self.label, &self.sources)
            .await
            .map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
        self.sources.tape.take();
        Ok(self.attached(live))
    }

    /// A fresh instance brought to the end of `journal` by replaying it, each call checked
    /// against its recorded answer and clock readings; the tape is live again afterwards.
    pub(super) async fn replay(&self, journal: &Journal) -> Result<Live, ReplayError> {
        self.replay_from(self.environment.ready(), journal).await
    }

    /// [`Maker::replay`] into an instance of `ready`, a component derived from the
    /// environment's.
    pub(super) async fn replay_from(
        &self,
        ready: &Ready,
        journal: &Journal,
    ) -> Result<Live, ReplayError> {
        self.sources.tape.play(&journal.start);
        self.sources.dice.at(Position::Start);
        let mut live = self.attached(
            self.environment
                .instantiate_from(ready, &self.label, &self.sources)
                .await
                .map_err(|e| ReplayError::Instantiate(format!("{e:#}")))?,
        );
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
                .run(
                    &mut live,
                    index,
                    &entry.op,
                    entry.context.clone(),
                    None,
                    Some(entry.exchanges.clone()),
                )
                .await;
            let diverged = |what: String| ReplayError::Diverged {
                index,
                op: entry.op.describe(),
                what,
            };
            let said = live.store.data().wasi.stderr().last_line();
            let answer = outcome.map_err(|e| {
                let fault = Fault::classify(&e, self.environment.limits().cpu_deadline, said);
                diverged(format!("the guest failed: {fault}"))
            })?;
            if journal.digest(&answer) != entry.answer {
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
