//! The `timing` capability: `agentenv:computer/timing`, time passing inside a driver's
//! operation (click gaps, key holds, a drag spread over its duration). A sleep is a tokio timer:
//! the guest's task yields, and a caller that leaves drops it. While a fork replays a journal,
//! sleeps end at once: the time they spread input over has passed for the original.

use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};

use crate::driver::bindings::agentenv::computer::timing;

/// The longest single sleep, in ms: the contract's longest wait (`max_wait_ms` defaults to
/// 60,000) with room to spare.
const LONGEST_SLEEP_MS: u32 = 600_000;

/// The `timing` capability's state in a store: whether sleeps are skipped.
#[derive(Default)]
pub struct Timing {
    skip: bool,
}

impl Timing {
    /// Sleeps that end at once.
    pub fn skipping() -> Self {
        Self { skip: true }
    }
}

impl timing::Host for Timing {
    async fn sleep(&mut self, ms: u32) {
        if self.skip {
            return;
        }
        tokio::time::sleep(Duration::from_millis(u64::from(ms.min(LONGEST_SLEEP_MS)))).await;
    }
}

/// Adds `agentenv:computer/timing` to `linker`, its state reached through `get`.
///
/// # Errors
/// wasmtime's, when the interface is already defined.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Timing,
) -> wasmtime::Result<()> {
    timing::add_to_linker::<T, HasSelf<Timing>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use timing::Host as _;

    #[tokio::test]
    async fn a_sleep_lasts_its_milliseconds() {
        let start = std::time::Instant::now();
        Timing::default().sleep(30).await;
        assert!(start.elapsed() >= Duration::from_millis(30));
    }

    #[tokio::test]
    async fn a_skipping_sleep_ends_at_once() {
        let start = std::time::Instant::now();
        Timing::skipping().sleep(10_000).await;
        assert!(start.elapsed() < Duration::from_secs(1));
    }
}
