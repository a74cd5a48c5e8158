//! A client's closed loop of tool calls over its session, through a warmup and a measured window.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use serde_json::{Map, Value};

use super::mcp::Session;
use super::procfs::CpuTimes;
use super::stats::ClientStats;
use super::template::CallTemplate;

/// When a client's calls count, and how long one may take.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Calls started from here on are counted (the warmup is over).
    pub start: Instant,
    /// No call starts from here on.
    pub end: Instant,
    /// The longest a call may take.
    pub call_timeout: Duration,
    /// The time between the starts of a client's calls (an open loop at a fixed rate; latency
    /// is measured from each call's actual send); `None` starts each call as the last one
    /// answers (a closed loop).
    pub pace: Option<Duration>,
}

impl Window {
    /// The window that starts `warmup` seconds from now and lasts `seconds`.
    pub fn after(warmup: f64, seconds: f64, call_timeout: Duration) -> Self {
        let now = Instant::now();
        Self {
            start: now + Duration::from_secs_f64(warmup),
            end: now + Duration::from_secs_f64(warmup + seconds),
            call_timeout,
            pace: None,
        }
    }

    /// The same window with each client starting `rate` calls a second (none: a closed loop).
    pub fn paced(self, rate: Option<f64>) -> Self {
        Self {
            pace: rate
                .filter(|r| *r > 0.0)
                .map(|r| Duration::from_secs_f64(1.0 / r)),
            ..self
        }
    }
}

/// One client's loop over `session` (closed, or paced by the window), each call's body made by
/// `body(request id, call number)` and required to answer `isError` false; answers the session
/// (to go on with or close) and what it measured. A connection the server closed is reopened;
/// when that fails the client stops (and says why in its stats).
pub async fn closed_loop(
    mut session: Session,
    mut body: impl FnMut(u64, u64) -> Bytes,
    window: Window,
) -> (Session, ClientStats) {
    let mut stats = ClientStats::default();
    let mut due = Instant::now();
    let mut n = 0u64;
    while due < window.end {
        let id = session.next_id();
        let sent = Instant::now();
        let outcome = session
            .call_tool(body(id, n), id, window.call_timeout)
            .await;
        let done = Instant::now();
        if due >= window.start {
            stats.record(outcome, done - sent);
        }
        n += 1;
        due = match window.pace {
            None => done,
            Some(pace) => {
                let next = due + pace;
                tokio::time::sleep_until(next.into()).await;
                next
            }
        };
        if session.conn.is_closed() {
            if let Err(e) = session.reconnect().await {
                stats.aborted = Some(format!("{e:#}"));
                break;
            }
            due = Instant::now();
        }
    }
    (session, stats)
}

/// What [`run_clients`] measured.
pub struct Finished {
    /// Each client's session (to go on with or close) and calls, in the order of the sessions.
    pub clients: Vec<(Session, ClientStats)>,
    /// The measured window, from the end of the warmup to the last client's last answer.
    pub elapsed: Duration,
    /// CPU times at the start of the window.
    pub cpu_start: CpuTimes,
    /// CPU times at its end.
    pub cpu_end: CpuTimes,
}

/// Runs a closed loop per session through `window`, client `first + i` on `sessions[i]` calling
/// `tool` with [`CallTemplate`] bodies (`arguments`, or the numbered slack message), and waits
/// for every loop; CPU times (this process', `server_pid`'s) are read as the window starts and
/// once the last loop ends.
///
/// # Errors
/// When a client task panicked.
pub async fn run_clients(
    sessions: Vec<Session>,
    tool: &str,
    first: usize,
    arguments: Option<&Map<String, Value>>,
    window: Window,
    server_pid: Option<u32>,
) -> anyhow::Result<Finished> {
    let tasks: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, session)| {
            let mut template = CallTemplate::new(tool, first + i, arguments);
            tokio::spawn(closed_loop(
                session,
                move |id, n| template.body(id, n),
                window,
            ))
        })
        .collect();
    tokio::time::sleep_until(window.start.into()).await;
    let cpu_start = CpuTimes::now(server_pid);
    let mut clients = Vec::with_capacity(tasks.len());
    for task in tasks {
        clients.push(task.await.context("a client task panicked")?);
    }
    Ok(Finished {
        clients,
        elapsed: window.start.elapsed(),
        cpu_start,
        cpu_end: CpuTimes::now(server_pid),
    })
}
