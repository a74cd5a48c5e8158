//! HTTP served by threads of their own, each a current-thread tokio runtime: one acceptor hands
//! every new connection to the thread with the fewest open, and the connection, with every call
//! made on it that answers within its first tick, stays on that thread (guests that compute
//! longer still move to the guest threads).
//!
//! On tokio's multi-threaded scheduler, a task that is woken while it runs is queued again and an
//! idle worker is woken to look for it; hyper's request body channel does that to every request
//! that has a body, so each `POST` cost a cross-thread wake-up that found nothing to do (about
//! 10 µs of CPU a request on 2 cores), and the request's work moved between cores. Threads that
//! each accepted from the shared socket took connections as the kernel woke them, which left one
//! thread with most of a burst of clients; hence the single acceptor.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::thread::JoinHandle;

use axum::Router;
use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

use super::{AppState, run_on, spawn_evictor};

/// Serves `router` on `listener` from `threads` HTTP threads (at least one), each running
/// [`run`](super::run) on a current-thread runtime of its own, until `shutdown` completes or a thread stops
/// with an error. The calling task accepts connections and hands each to the thread with the
/// fewest open; idle episodes of `state`'s host are evicted every second meanwhile. Answers once
/// every thread has stopped.
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
    let local = listener.local_addr()?;
    let (stop, stopped) = watch::channel(false);
    let (ended, mut ends) = mpsc::unbounded_channel();
    let mut workers = Vec::new();
    let mut started = Ok(());
    for _ in 0..threads.max(1) {
        let (hand, handed) = mpsc::unbounded_channel();
        let open = Arc::new(AtomicUsize::new(0));
        let incoming = Handed {
            connections: handed,
            open: open.clone(),
            local,
        };
        let router = router.clone();
        let stopped = stopped.clone();
        let ended = ended.clone();
        let thread = std::thread::Builder::new()
            .name("envhost-http".into())
            .spawn(move || drop(ended.send(serve_thread(incoming, router, stopped))));
        match thread {
            Ok(thread) => workers.push(Worker { hand, open, thread }),
            Err(e) => {
                started = Err(e);
                break;
            }
        }
    }
    drop(ended);
    let evictor = spawn_evictor(state);
    let mut outcome = started;
    if outcome.is_ok() {
        tokio::select! {
            () = shutdown => {}
            Some(served) = ends.recv() => outcome = served,
            () = accept(listener, &workers) => {}
        }
    }
    stop.send_replace(true);
    let joined = join(workers.into_iter().map(|w| w.thread).collect()).await;
    evictor.abort();
    while let Ok(served) = ends.try_recv() {
        outcome = outcome.and(served);
    }
    outcome.and(joined)
}

/// An HTTP thread as the acceptor sees it.
struct Worker {
    /// Where its new connections go.
    hand: mpsc::UnboundedSender<std::net::TcpStream>,
    /// How many connections it has open.
    open: Arc<AtomicUsize>,
    thread: JoinHandle<()>,
}

/// Accepts connections forever (axum's accept: errors are logged and retried), handing each,
/// with `TCP_NODELAY` set as [`run`](super::run) sets it, to the worker with the fewest open. A connection
/// that cannot leave this runtime's reactor, or whose worker has stopped, is closed.
async fn accept(mut listener: TcpListener, workers: &[Worker]) {
    loop {
        let (stream, _) = Listener::accept(&mut listener).await;
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let Some(worker) = workers
            .iter()
            .min_by_key(|w| w.open.load(Ordering::Relaxed))
        else {
            return;
        };
        match stream.into_std() {
            Ok(stream) => {
                worker.open.fetch_add(1, Ordering::Relaxed);
                if worker.hand.send(stream).is_err() {
                    worker.open.fetch_sub(1, Ordering::Relaxed);
                }
            }
            Err(e) => tracing::debug!(error = %e, "cannot hand a connection to an HTTP thread"),
        }
    }
}

/// One thread's server: [`run_on`] a current-thread runtime over the connections handed to it,
/// until `stopped` turns true.
fn serve_thread(
    incoming: Handed,
    router: Router,
    mut stopped: watch::Receiver<bool>,
) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run_on(incoming, router, async move {
        drop(stopped.wait_for(|stop| *stop).await);
    }))
}

/// The connections handed to one HTTP thread, as an axum listener: each is registered with the
/// thread's own runtime as it is accepted, and counted in `open` until it closes.
struct Handed {
    connections: mpsc::UnboundedReceiver<std::net::TcpStream>,
    open: Arc<AtomicUsize>,
    local: SocketAddr,
}

impl Listener for Handed {
    type Io = Counted;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Counted, SocketAddr) {
        loop {
            let Some(stream) = self.connections.recv().await else {
                return std::future::pending().await;
            };
            let open = Open(self.open.clone());
            let registered =
                TcpStream::from_std(stream).and_then(|stream| Ok((stream.peer_addr()?, stream)));
            match registered {
                Ok((peer, stream)) => {
                    return (
                        Counted {
                            stream,
                            _open: open,
                        },
                        peer,
                    );
                }
                Err(e) => tracing::debug!(error = %e, "cannot take a handed connection"),
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }
}

/// One of a thread's open connections: takes itself off the count when dropped.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A TCP connection counted among its thread's open ones while it lives.
struct Counted {
    stream: TcpStream,
    _open: Open,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
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
