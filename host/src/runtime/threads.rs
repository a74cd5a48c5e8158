//! Where guest code runs: on the runtime that created the episode, moving to threads of its own
//! while it computes.
//!
//! A guest runs until it answers or its epoch tick ([`super::EPOCH_TICK`]) ends, so on the HTTP runtime
//! a spinning guest holds one of its few workers a tick at a time and whatever was queued there
//! waits behind it. Handing every call to other threads avoids that but costs two thread
//! wake-ups per call, which halves the calls a small machine serves. So an episode's task
//! *roams*: it runs where it was created while its guest answers within a tick (the usual case,
//! no hand-off), and moves to the guest threads once a tick ends inside its guest (the epoch
//! callback calls [`mark_computing`]). There, in the `SCHED_IDLE` class, the kernel runs it only
//! on CPU the HTTP threads leave. It moves back after a poll in which no tick ended (it answered
//! and waits for the next call).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tokio::runtime::Handle;

/// Where episodes' calls run.
pub struct GuestThreads {
    runtime: Option<tokio::runtime::Runtime>,
}

impl GuestThreads {
    /// Always on the tokio runtime that creates the episode: the fewest hand-offs, for
    /// in-process use where the caller's threads do nothing else.
    pub fn shared() -> Self {
        Self { runtime: None }
    }

    /// With `threads` threads of their own (a multi-threaded tokio runtime named `envhost-guest`,
    /// at least one thread) for guests that compute longer than a tick.
    ///
    /// # Errors
    /// The I/O error of starting the threads.
    pub fn dedicated(threads: usize) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("envhost-guest")
            .on_thread_start(lower_priority)
            .enable_time()
            .build()?;
        Ok(Self {
            runtime: Some(runtime),
        })
    }

    /// Runs `task` (an episode's call loop) on the current tokio runtime, roaming to the guest
    /// threads when there are any.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub(crate) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        match &self.runtime {
            None => drop(tokio::spawn(task)),
            Some(runtime) => drop(tokio::spawn(Roaming {
                task: Some(Box::pin(task)),
                home: Handle::current(),
                guests: runtime.handle().clone(),
                on_guests: false,
            })),
        }
    }
}

impl Drop for GuestThreads {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

thread_local! {
    /// Whether an epoch tick has ended inside a guest during the current poll of a [`Roaming`]
    /// task on this thread.
    static COMPUTING: Cell<bool> = const { Cell::new(false) };
}

/// Notes that a guest running on this thread has used up an epoch tick (called from the epoch
/// callback).
pub(crate) fn mark_computing() {
    COMPUTING.set(true);
}

/// A task that runs on `home` while its guest answers within a tick, and on `guests` from a poll
/// in which a tick ended inside its guest until the next poll in which none did. Moving is spawning the same boxed future on the other
/// runtime: its first poll there registers the new task's waker with whatever it waits on.
struct Roaming {
    task: Option<BoxFuture<'static, ()>>,
    home: Handle,
    guests: Handle,
    on_guests: bool,
}

impl Future for Roaming {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(task) = self.task.as_mut() else {
            return Poll::Ready(());
        };
        COMPUTING.set(false);
        if task.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        let computing = COMPUTING.get();
        if computing == self.on_guests {
            return Poll::Pending;
        }
        let moved = Roaming {
            task: self.task.take(),
            home: self.home.clone(),
            guests: self.guests.clone(),
            on_guests: computing,
        };
        let to = if computing { &self.guests } else { &self.home };
        drop(to.spawn(moved));
        Poll::Ready(())
    }
}

/// Puts the calling thread in the `SCHED_IDLE` class: the kernel runs it on what CPU the HTTP
/// threads leave, and preempts it at once for any of them that wakes.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a valid parameter has no
    // memory-safety preconditions; a failure only leaves the class as it was.
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        if libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) != 0 {
            tracing::debug!("cannot lower a guest thread's priority");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_name() -> String {
        std::thread::current().name().unwrap_or_default().to_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_task_moves_to_the_guest_threads_while_it_computes_and_back_after() {
        let threads = GuestThreads::dedicated(1).unwrap();
        let (names, mut seen) = tokio::sync::mpsc::unbounded_channel();
        threads.spawn(async move {
            names.send(thread_name()).unwrap();
            mark_computing();
            tokio::task::yield_now().await;
            names.send(thread_name()).unwrap();
            tokio::task::yield_now().await;
            names.send(thread_name()).unwrap();
        });
        let mut next = async || seen.recv().await.unwrap();
        assert_ne!(next().await, "envhost-guest", "a task starts at home");
        assert_eq!(next().await, "envhost-guest", "a long poll moves it");
        assert_ne!(next().await, "envhost-guest", "a short poll moves it back");
    }
}
