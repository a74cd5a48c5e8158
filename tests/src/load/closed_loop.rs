//! A client's closed loop of tool calls over its session, through a warmup and a measured window.

use std::time::{Duration, Instant};

use bytes::Bytes;

use super::mcp::Session;
use super::stats::ClientStats;

/// When a client's calls count, and how long one may take.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Calls started from here on are counted (the warmup is over).
    pub start: Instant,
    /// No call starts from here on.
    pub end: Instant,
    /// The longest a call may take.
    pub call_timeout: Duration,
}

impl Window {
    /// The window that starts `warmup` seconds from now and lasts `seconds`.
    pub fn after(warmup: f64, seconds: f64, call_timeout: Duration) -> Self {
        let now = Instant::now();
        Self {
            start: now + Duration::from_secs_f64(warmup),
            end: now + Duration::from_secs_f64(warmup + seconds),
            call_timeout,
        }
    }
}

/// One client's closed loop over `session`, each call's body made by `body(request id, call
/// number)` and required to answer `isError` false; answers the session (to go on with or close)
/// and what it measured. A connection the server closed is reopened; when that fails the client
/// stops (and says why in its stats).
pub async fn closed_loop(
    mut session: Session,
    mut body: impl FnMut(u64, u64) -> Bytes,
    window: Window,
) -> (Session, ClientStats) {
    let mut stats = ClientStats::default();
    let mut now = Instant::now();
    let mut n = 0u64;
    while now < window.end {
        let id = session.next_id();
        let outcome = session
            .call_tool(body(id, n), id, window.call_timeout)
            .await;
        let done = Instant::now();
        if now >= window.start {
            stats.record(outcome, done - now);
        }
        n += 1;
        now = done;
        if session.conn.is_closed() {
            if let Err(e) = session.reconnect().await {
                stats.aborted = Some(format!("{e:#}"));
                break;
            }
            now = Instant::now();
        }
    }
    (session, stats)
}
