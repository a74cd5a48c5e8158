//! A count held one higher for as long as a value lives.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts one more for as long as it lives: a call running in a guest (the epoch ticks fast
/// while any does), a call admitted to an episode, an agent's turn.
pub(crate) struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    /// Counts one more on `count`, which had the value returned beside.
    pub(crate) fn start(count: &'a AtomicUsize) -> (Self, usize) {
        (Self(count), count.fetch_add(1, Ordering::Relaxed))
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
