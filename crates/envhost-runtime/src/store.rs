//! The data of an episode's store: the state of each capability its guest is linked with, and
//! the limits the store enforces (its memory cap, the current call's CPU deadline).

use wasmtime::{Engine, ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtxView, WasiView};

use crate::agent::AgentState;
use crate::capability::client::ClientView;
use crate::capability::context::Context;
use crate::capability::log::{Log, LogView};
use crate::capability::pixels::Pixels;
use crate::capability::serving::Serving;
use crate::capability::timing::Timing;
use crate::capability::wasi::{Sources, Wasi};
use crate::capability::x11::{X11, X11View};
use crate::limits::{Deadline, Limits, MemoryCap};

/// The data of one episode's store.
pub struct StoreData {
    /// WASI, nothing granted, random and clocks from the episode's sources.
    pub(crate) wasi: Wasi,
    /// The call being served.
    pub(crate) context: Context,
    /// The guest's log.
    pub(crate) log: Log,
    /// A driver's captures held by the host.
    pub(crate) pixels: Pixels,
    /// Time passing inside a driver's operation.
    pub(crate) timing: Timing,
    /// A granted display's X server (linked only for a driver granted one).
    pub(crate) x11: X11,
    /// An agent's turn: its broker and the model answers it holds.
    pub(crate) agent: AgentState,
    /// The episode's tool descriptions as its guest changed them.
    pub(crate) serving: Serving,
    memory: MemoryCap,
    deadline: Deadline,
}

impl StoreData {
    /// The data of a store labelled `label` in the log, under `limits`, whose WASI random and
    /// clocks come from `sources`.
    pub(crate) fn new(label: String, limits: &Limits, sources: &Sources) -> Self {
        Self {
            wasi: Wasi::new(sources),
            context: Context::default(),
            log: Log::new(label),
            pixels: Pixels::default(),
            timing: Timing::default(),
            x11: X11::new(String::new()),
            agent: AgentState::default(),
            serving: Serving::default(),
            memory: MemoryCap::new(limits.memory_bytes),
            deadline: Deadline::new(limits.cpu_deadline),
        }
    }

    /// A store of `engine` holding this data, as every world's guest runs in: memory capped by
    /// the data's limiter, and an epoch callback that interrupts the guest once the current
    /// call is past its CPU deadline and otherwise yields to the async runtime (so it can poll
    /// its timers and I/O before the guest resumes), first noting the tick for the guest
    /// threads' scheduler when `roams` (an environment's call, which may move to the guest
    /// threads: `crate::threads`). The deadline is armed for what runs first (instantiation).
    pub(crate) fn into_store(self, engine: &Engine, limits: &Limits, roams: bool) -> Store<Self> {
        let mut store = Store::new(engine, self);
        store.limiter(Self::limiter);
        store.epoch_deadline_callback(move |mut ctx| {
            if ctx.data_mut().past_deadline() || ctx.data().context.cancelled() {
                return Ok(UpdateDeadline::Interrupt);
            }
            if roams {
                crate::threads::mark_computing();
            }
            Ok(UpdateDeadline::YieldCustom(
                1,
                Box::pin(tokio::task::yield_now()),
            ))
        });
        Self::arm_deadline(&mut store, limits);
        store
    }

    /// Arms a call's CPU deadline in `store`: the first epoch callback comes only after a whole
    /// tick of guest execution (so a call shorter than a tick never stops to yield, never waits
    /// behind another task for it, and never reads the clock for its deadline); that callback
    /// dates the deadline `limits.cpu_deadline` after the call's start, then one comes every
    /// tick, and the first after the deadline interrupts the guest.
    pub(crate) fn arm_deadline(store: &mut Store<Self>, limits: &Limits) {
        store.data_mut().deadline.arm(limits.cpu_deadline);
        store.set_epoch_deadline(2);
    }

    /// Whether the current call has run past its CPU deadline (dated on its first tick).
    pub(crate) fn past_deadline(&mut self) -> bool {
        self.deadline.passed()
    }

    /// The `x11` capability's view: its state and the `pixels` table.
    pub(crate) fn x11_view(&mut self) -> X11View<'_> {
        X11View {
            x11: &mut self.x11,
            pixels: &mut self.pixels,
        }
    }

    /// The `log` capability's view: its state and the call's peer.
    pub(crate) fn log_view(&mut self) -> LogView<'_> {
        LogView {
            log: &mut self.log,
            context: &self.context,
        }
    }

    /// The `client` and `upload` capabilities' view: the call being served and its deadline.
    pub(crate) fn client_view(&mut self) -> ClientView<'_> {
        ClientView {
            context: &mut self.context,
            deadline: &mut self.deadline,
        }
    }

    /// The store's resource limiter.
    pub(crate) fn limiter(&mut self) -> &mut dyn ResourceLimiter {
        &mut self.memory
    }
}

impl WasiView for StoreData {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        self.wasi.view()
    }
}
