//! HTTP served by threads of their own, each a current-thread tokio runtime accepting from the
//! same listening socket: a connection, and every call made on it that answers within its first
//! tick, stays on the thread that accepted it (guests that compute longer still move to the
//! guest threads).
//!
//! On tokio's multi-threaded scheduler, a task that is woken while it runs is queued again and an
//! idle worker is woken to look for it; hyper's request body channel does that to every request
//! that has a body, so each `POST` cost a cross-thread wake-up that found nothing to do (about
//! 10 µs of CPU a request on 2 cores), and the request's work moved between cores.

use std::future::Future;
use std::io;
use std::net::TcpListener;
use std::thread::JoinHandle;

use axum::Router;
use tokio::sync::{mpsc, watch};

use super::{AppState, run, spawn_evictor};

/// Serves `router` on `listener` (a bound, listening socket) from `threads` threads (at least
/// one), each running [`run`] on a current-thread runtime of its own, until `shutdown`
/// completes or a thread stops with an error; idle episodes of `state`'s host are evicted every
/// second meanwhile. Answers once every thread has stopped.
///
/// # Errors
/// The I/O error that stopped a thread, or that kept one from starting.
pub async fn serve_threads(
    listener: TcpListener,
    threads: usize,
    router: Router,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let (stop, stopped) = watch::channel(false);
    let (ended, mut ends) = mpsc::unbounded_channel();
    let mut handles = Vec::new();
    let mut started = Ok(());
    for _ in 0..threads.max(1) {
        let thread = listener.try_clone().and_then(|listener| {
            let router = router.clone();
            let stopped = stopped.clone();
            let ended = ended.clone();
            std::thread::Builder::new()
                .name("envhost-http".into())
                .spawn(move || {
                    let served = serve_thread(listener, router, stopped);
                    drop(ended.send(served));
                })
        });
        match thread {
            Ok(handle) => handles.push(handle),
            Err(e) => {
                started = Err(e);
                break;
            }
        }
    }
    drop((listener, ended));
    let evictor = spawn_evictor(state);
    let mut outcome = started;
    if outcome.is_ok() {
        tokio::select! {
            () = shutdown => {}
            Some(served) = ends.recv() => outcome = served,
        }
    }
    stop.send_replace(true);
    let joined = join(handles).await;
    evictor.abort();
    while let Ok(served) = ends.try_recv() {
        outcome = outcome.and(served);
    }
    outcome.and(joined)
}

/// One thread's server: [`run`] on a current-thread runtime until `stopped` turns true.
fn serve_thread(
    listener: TcpListener,
    router: Router,
    mut stopped: watch::Receiver<bool>,
) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        run(listener, router, async move {
            drop(stopped.wait_for(|stop| *stop).await);
        })
        .await
    })
}

/// Waits, off the async threads, for every thread in `handles` to end.
async fn join(handles: Vec<JoinHandle<()>>) -> io::Result<()> {
    let panicked = tokio::task::spawn_blocking(move || {
        handles
            .into_iter()
            .map(JoinHandle::join)
            .filter(Result::is_err)
            .count()
    })
    .await
    .map_err(io::Error::other)?;
    if panicked == 0 {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{panicked} HTTP thread(s) panicked"
        )))
    }
}
