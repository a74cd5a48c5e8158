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

/// One client of a load: the MCP sessions it calls in turn, one call at a time, each over its
/// own connection or, when the connection is shared, every one over the first session's (the
/// sessions stay apart by their `Mcp-Session-Id`; the others' connections stay open, idle).
pub struct Client {
    /// The sessions, called in this order, round and round.
    sessions: Vec<Session>,
    /// Whether every call goes over the first session's connection.
    shared: bool,
}

impl Client {
    /// A client of `sessions` (at least one), sharing the first one's connection when `shared`.
    ///
    /// # Panics
    /// When `sessions` is empty.
    pub fn new(sessions: Vec<Session>, shared: bool) -> Self {
        assert!(!sessions.is_empty(), "a client needs a session");
        Self { sessions, shared }
    }

    /// A client of one session over its own connection.
    pub fn single(session: Session) -> Self {
        Self::new(vec![session], false)
    }

    /// Its sessions, in order.
    pub fn into_sessions(self) -> Vec<Session> {
        self.sessions
    }

    /// Ends every session (see [`Session::close`]).
    pub async fn close(&mut self) {
        for session in &mut self.sessions {
            session.close().await;
        }
    }

    /// Lends the first session's connection to session `k` (or takes it back: the same swap).
    fn swap_shared(&mut self, k: usize) {
        if self.shared && k > 0 {
            let (first, rest) = self.sessions.split_at_mut(k);
            std::mem::swap(&mut first[0].conn, &mut rest[0].conn);
        }
    }

    /// Calls with session `k`, over its connection or the shared one; answers the call's outcome
    /// and, when the server closed the connection the call went over, how reopening it went.
    async fn call(
        &mut self,
        k: usize,
        body: Bytes,
        id: u64,
        timeout: Duration,
    ) -> (anyhow::Result<()>, Option<anyhow::Result<()>>) {
        self.swap_shared(k);
        let outcome = self.sessions[k].call_tool(body, id, timeout).await;
        self.swap_shared(k);
        let carrier = if self.shared { 0 } else { k };
        let session = &mut self.sessions[carrier];
        let reopened = if session.conn.is_closed() {
            Some(session.reconnect().await)
        } else {
            None
        };
        (outcome, reopened)
    }
}

/// One client's loop over its sessions in turn (closed, or paced by the window), each call's
/// body made by `body(request id, call number)` and required to answer `isError` false; answers
/// the client (to go on with or close) and what it measured. A connection the server closed is
/// reopened; when that fails the client stops (and says why in its stats).
pub async fn closed_loop(
    mut client: Client,
    mut body: impl FnMut(u64, u64) -> Bytes,
    window: Window,
) -> (Client, ClientStats) {
    let mut stats = ClientStats::default();
    let mut due = Instant::now();
    let mut n = 0u64;
    let mut k = 0;
    while due < window.end {
        let id = client.sessions[k].next_id();
        let sent = Instant::now();
        let (outcome, reopened) = client.call(k, body(id, n), id, window.call_timeout).await;
        let done = Instant::now();
        if due >= window.start {
            stats.record(outcome, done - sent);
        }
        n += 1;
        k = (k + 1) % client.sessions.len();
        due = match window.pace {
            None => done,
            Some(pace) => {
                let next = due + pace;
                tokio::time::sleep_until(next.into()).await;
                next
            }
        };
        match reopened {
            None => {}
            Some(Ok(())) => due = Instant::now(),
            Some(Err(e)) => {
                stats.aborted = Some(format!("{e:#}"));
                break;
            }
        }
    }
    (client, stats)
}

/// What [`run_clients`] measured.
pub struct Finished {
    /// Each client (to go on with or close) and its calls, in the order given.
    pub clients: Vec<(Client, ClientStats)>,
    /// The measured window, from the end of the warmup to the last client's last answer.
    pub elapsed: Duration,
    /// CPU times at the start of the window.
    pub cpu_start: CpuTimes,
    /// CPU times at its end.
    pub cpu_end: CpuTimes,
}

/// Runs a closed loop per client through `window`, client `first + i` (`clients[i]`) calling
/// `tool` with [`CallTemplate`] bodies (`arguments`, or the numbered slack message), and waits
/// for every loop; CPU times (this process', `server_pid`'s) are read as the window starts and
/// once the last loop ends.
///
/// # Errors
/// When a client task panicked.
pub async fn run_clients(
    clients: Vec<Client>,
    tool: &str,
    first: usize,
    arguments: Option<&Map<String, Value>>,
    window: Window,
    server_pid: Option<u32>,
) -> anyhow::Result<Finished> {
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(i, client)| {
            let mut template = CallTemplate::new(tool, first + i, arguments);
            tokio::spawn(closed_loop(
                client,
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
