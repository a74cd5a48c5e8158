//! Where guest code runs: on the caller's task while it answers within a tick, on tasks of its
//! own, moving to threads of their own, while it computes longer.
//!
//! A guest runs until it answers or its epoch tick ([`crate::EPOCH_TICK`]) ends, so on the HTTP
//! runtime a spinning guest holds one of its few workers a tick at a time and whatever was queued
//! there waits behind it. Handing every call to other threads avoids that but costs two thread
//! wake-ups per call, which halves the calls a small machine serves; handing it to another task
//! on the same threads costs a task switch and a channel each way. So a call runs first on the
//! caller's own task ([`Placement::start`]): a call that answers within that first poll (the
//! usual case) never leaves it. One that does not, a guest whose tick ended (the epoch callback
//! calls [`mark_computing`]) or that awaits the host, moves within that same poll to a task of
//! its own, which *roams*: on the guest threads while its guest computes, where the kernel runs
//! it in the `SCHED_IDLE` class only on CPU the HTTP threads leave, back on the runtime it came
//! from after a poll in which no tick ended. Once it has moved the call always runs to its end,
//! whether or not its caller still waits for it.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// Where episodes' calls run.
pub struct GuestThreads {
    runtime: Option<tokio::runtime::Runtime>,
    /// The runtime these were made on, if any: where [`GuestThreads::spawn`] starts its work.
    home: Option<Handle>,
}

impl GuestThreads {
    /// Always on the tokio runtime of the caller: the fewest hand-offs, for in-process use where
    /// the caller's threads do nothing else.
    pub fn shared() -> Self {
        Self {
            runtime: None,
            home: Handle::try_current().ok(),
        }
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
            home: Handle::try_current().ok(),
        })
    }

    /// Where an episode's calls go when they outlast their first poll: a cheap handle.
    pub(crate) fn placement(&self) -> Placement {
        Placement {
            guests: self.runtime.as_ref().map(|r| r.handle().clone()),
        }
    }

    /// Runs `task` (work that runs guests, such as making an image) on the tokio runtime these
    /// threads were made on (the current one when they were made outside any), roaming to the
    /// guest threads when there are any. Work in the background so stays off a runtime that
    /// serves a share of the connections, such as one HTTP thread's.
    ///
    /// # Panics
    /// Made outside a tokio runtime and called outside one.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let home = self.home.clone().unwrap_or_else(Handle::current);
        self.placement().spawn_from(home, Box::pin(task), false);
    }
}

/// A call under way: answered in its first poll, or moved to a task of its own whose answer comes
/// through the receiver (an error when the task ended without one).
pub(crate) enum Started<T> {
    /// The call answered on the caller's task.
    Done(T),
    /// The call runs on a task of its own.
    Moved(oneshot::Receiver<T>),
}

/// A handle to the guest threads, if any, for an episode's calls.
#[derive(Clone)]
pub(crate) struct Placement {
    guests: Option<Handle>,
}

impl Placement {
    /// Polls `call` once on the caller's task; if it is not done, moves it, in that same poll, to
    /// a roaming task of its own (on the guest threads if a tick ended in its guest), so that no
    /// caller going away can stop a guest mid-call.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub(crate) async fn start<T: Send + 'static>(
        &self,
        mut call: BoxFuture<'static, T>,
    ) -> Started<T> {
        COMPUTING.set(false);
        match std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await {
            Poll::Ready(answer) => Started::Done(answer),
            Poll::Pending => {
                let (reply, answer) = oneshot::channel();
                let task = Box::pin(async move { drop(reply.send(call.await)) });
                self.spawn_from(Handle::current(), task, COMPUTING.get());
                Started::Moved(answer)
            }
        }
    }

    /// Spawns `task` as a roaming task whose home is `home`, on the guest threads when
    /// `computing` and there are any.
    fn spawn_from(&self, home: Handle, task: BoxFuture<'static, ()>, computing: bool) {
        let Some(guests) = self.guests.clone() else {
            drop(home.spawn(task));
            return;
        };
        let roaming = Roaming {
            task: Some(task),
            home: home.clone(),
            guests: guests.clone(),
            on_guests: computing,
        };
        drop(if computing {
            guests.spawn(roaming)
        } else {
            home.spawn(roaming)
        });
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_call_done_in_its_first_poll_stays_on_the_callers_task() {
        let threads = GuestThreads::dedicated(1).unwrap();
        let placement = threads.placement();
        let caller = std::thread::current().id();
        let started = placement
            .start(Box::pin(
                async move { std::thread::current().id() == caller },
            ))
            .await;
        assert!(matches!(started, Started::Done(true)));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_computing_call_moves_to_the_guest_threads_and_ends_without_its_caller() {
        let threads = GuestThreads::dedicated(1).unwrap();
        let placement = threads.placement();
        let (done, ended) = oneshot::channel();
        let call = async move {
            mark_computing();
            tokio::task::yield_now().await;
            drop(done.send(thread_name()));
            thread_name()
        };
        let Started::Moved(answer) = placement.start(Box::pin(call)).await else {
            panic!("a call that yields is moved");
        };
        drop(answer);
        assert_eq!(ended.await.unwrap(), "envhost-guest");
    }
}
