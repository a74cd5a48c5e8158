//! The input queue (computer.md#queue): input calls run one at a time in arrival order, and
//! delivered inputs are counted per caller so a result can say how many others landed since
//! the frame it named.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use envhost_protocol::computer::errors::Code;
use envhost_protocol::computer::pyfmt::g;
use envhost_protocol::error::CodedError;
use tokio::sync::{Mutex as Turns, OwnedMutexGuard};

/// Inputs delivered: in all, and by caller.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    total: u64,
    by_caller: HashMap<String, u64>,
}

/// The queue: a first-come, first-served lock, and the counts.
#[derive(Default)]
pub struct InputQueue {
    turns: Arc<Turns<()>>,
    counts: Mutex<Counts>,
}

/// One call's turn: the queue is held until it is dropped.
pub struct Turn(#[allow(dead_code)] OwnedMutexGuard<()>);

impl InputQueue {
    /// Waits for the queue, at most `wait`. A wait given up (by the timeout, or by the caller
    /// going away) never leaves the queue held.
    ///
    /// # Errors
    /// `input_busy` after `wait`.
    pub async fn turn(&self, wait: Duration) -> Result<Turn, CodedError> {
        match tokio::time::timeout(wait, self.turns.clone().lock_owned()).await {
            Ok(guard) => Ok(Turn(guard)),
            Err(_) => Err(Code::InputBusy.error(format!(
                "waited {} s for earlier input to finish",
                g(wait.as_secs_f64())
            ))),
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one input call of `caller` as delivered.
    pub fn delivered(&self, caller: &str) {
        let mut counts = self.counts();
        counts.total += 1;
        *counts.by_caller.entry(caller.to_owned()).or_default() += 1;
    }

    /// The counts now, to compare with later.
    pub fn snapshot(&self) -> Counts {
        self.counts().clone()
    }

    /// The inputs of callers other than `caller` delivered since `then`.
    pub fn others_since(&self, then: &Counts, caller: &str) -> u64 {
        let now = self.counts();
        let mine = |c: &Counts| c.by_caller.get(caller).copied().unwrap_or(0);
        (now.total - then.total).saturating_sub(mine(&now) - mine(then))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_busy_queue_refuses_after_the_wait_and_stays_usable() {
        let queue = InputQueue::default();
        let held = queue.turn(Duration::from_secs(1)).await.unwrap();
        let refused = queue.turn(Duration::from_millis(20)).await.err().unwrap();
        assert_eq!(refused.code, "input_busy");
        assert_eq!(refused.message, "waited 0.02 s for earlier input to finish");
        drop(held);
        queue.turn(Duration::from_millis(20)).await.unwrap();
    }

    #[test]
    fn others_are_counted_apart_from_the_caller() {
        let queue = InputQueue::default();
        let then = queue.snapshot();
        queue.delivered("a");
        queue.delivered("b");
        queue.delivered("b");
        assert_eq!(queue.others_since(&then, "a"), 2);
        assert_eq!(queue.others_since(&then, "b"), 1);
    }
}
