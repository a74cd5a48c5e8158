//! The `wasi` capability: WASI 0.2 with nothing granted (no filesystem, network, environment
//! variables, stdin or stdout; stderr kept for the operator, [`Stderr`]), its random and clocks
//! made repeatable. Random comes from [`Dice`] drawn
//! from the episode's [`Seed`] and the call's place in the journal; clock readings go through a
//! [`Tape`] that records them live and plays them back on replay. So the same seed, calls and
//! tape always give the same guest behaviour.

mod clocks;
mod random;
mod stderr;

use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

pub use clocks::{Reading, Tape};
pub use random::{Dice, Position, Seed};
pub use stderr::Stderr;

use clocks::{MonotonicClock, WallClock};
use random::{Draws, Stream};

/// Where everything an episode's guest observes besides its calls comes from: its seed, the
/// dice drawn from it, and its clock tape. Clones share the dice and the tape.
#[derive(Clone)]
pub(crate) struct Sources {
    /// The episode's seed.
    pub(crate) seed: Seed,
    /// WASI random.
    pub(crate) dice: Dice,
    /// WASI clocks.
    pub(crate) tape: Tape,
}

impl Sources {
    /// The sources of an episode with `seed`, at its start, with an idle tape.
    pub(crate) fn new(seed: Seed) -> Self {
        Self {
            seed,
            dice: Dice::new(seed),
            tape: Tape::default(),
        }
    }
}

/// The `wasi` capability's state in a store: the WASI context and its resource table.
pub struct Wasi {
    ctx: WasiCtx,
    table: ResourceTable,
    stderr: Stderr,
}

impl Wasi {
    /// WASI with no grants whose random and clocks come from `sources`.
    pub(crate) fn new(sources: &Sources) -> Self {
        let mut insecure_seed = [0u8; 16];
        insecure_seed.copy_from_slice(&sources.seed.0[..16]);
        let tape = &sources.tape;
        let stderr = Stderr::default();
        let ctx = WasiCtx::builder()
            .stderr(stderr.clone())
            .secure_random(Draws(sources.dice.clone(), Stream::Secure))
            .insecure_random(Draws(sources.dice.clone(), Stream::Insecure))
            .insecure_random_seed(u128::from_le_bytes(insecure_seed))
            .wall_clock(WallClock(tape.clone()))
            .monotonic_clock(MonotonicClock(tape.clone()))
            .build();
        Self {
            ctx,
            table: ResourceTable::new(),
            stderr,
        }
    }

    /// What the guest wrote to stderr, its tail.
    pub fn stderr(&self) -> &Stderr {
        &self.stderr
    }

    /// The view wasmtime-wasi's host implementations work on; a store's data answers it as its
    /// [`WasiView`].
    pub fn view(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}

/// Adds every WASI 0.2 interface to `linker`, answered from the store data's [`WasiView`]
/// (wasmtime-wasi reaches its state through that trait rather than a getter).
///
/// # Errors
/// wasmtime's, when an interface is defined twice.
pub fn add_to_linker<T: WasiView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)
}
