//! One turn of a load: its clients' closed loops of `<name>_send_message` through a warmup and
//! a measured window, and what the turns of a load add up to.

use std::time::Duration;

use anyhow::Context as _;
use envhost_tests::load::closed_loop::{Window, closed_loop};
use envhost_tests::load::mcp::Session;
use envhost_tests::load::procfs::CpuTimes;
use envhost_tests::load::stats::ClientStats;
use envhost_tests::load::template::CallTemplate;

use super::Args;

/// The clients of one load: their sessions, kept open from turn to turn.
pub(super) struct Group {
    /// Each client's session.
    sessions: Vec<Session>,
    /// The tool they call.
    tool: String,
    /// The number of the first client (client numbers tell the message texts apart).
    first: usize,
}

impl Group {
    /// The clients of `sessions`, numbered from `first`, calling `tool`.
    pub(super) fn new(sessions: Vec<Session>, tool: &str, first: usize) -> Self {
        Self {
            sessions,
            tool: tool.to_owned(),
            first,
        }
    }

    /// Closes every session.
    pub(super) async fn close(&mut self) {
        for session in &mut self.sessions {
            session.close().await;
        }
    }
}

/// One turn's measurements.
pub(super) struct Turn {
    /// Each client's calls in the window.
    clients: Vec<ClientStats>,
    /// The window, from the end of the warmup to the last client's last answer.
    elapsed: Duration,
    /// The server's CPU seconds over it.
    server_cpu: Option<f64>,
    /// This process' CPU seconds over it.
    client_cpu: f64,
}

/// What the turns of one load add up to.
#[derive(Default)]
pub(super) struct Load {
    /// Each client's calls over every turn.
    pub(super) clients: Vec<ClientStats>,
    /// The measured windows, added up.
    pub(super) elapsed: Duration,
    /// Each turn's successful calls per second, in order.
    pub(super) rates: Vec<f64>,
    /// The server's CPU seconds over the windows, when it could be read in every one.
    pub(super) server_cpu: Option<f64>,
    /// This process' CPU seconds over the windows.
    pub(super) client_cpu: f64,
}

impl Load {
    /// Adds a turn.
    pub(super) fn add(&mut self, turn: Turn) {
        let calls: usize = turn.clients.iter().map(ClientStats::calls).sum();
        self.rates.push(calls as f64 / turn.elapsed.as_secs_f64());
        self.server_cpu = match (self.rates.len(), self.server_cpu, turn.server_cpu) {
            (1, _, now) => now,
            (_, Some(before), Some(now)) => Some(before + now),
            _ => None,
        };
        self.client_cpu += turn.client_cpu;
        self.elapsed += turn.elapsed;
        if self.clients.is_empty() {
            self.clients = turn.clients;
        } else {
            for (all, new) in self.clients.iter_mut().zip(turn.clients) {
                all.merge(new);
            }
        }
    }
}

/// One turn of `group`: its clients' closed loops through `args.warmup` seconds and a window of
/// `args.seconds`.
pub(super) async fn turn(args: &Args, group: &mut Group) -> anyhow::Result<Turn> {
    let pid = args.common.server_pid;
    let window = Window::after(
        args.warmup,
        args.seconds,
        Duration::from_secs_f64(args.common.timeout),
    );
    let tasks: Vec<_> = group
        .sessions
        .drain(..)
        .enumerate()
        .map(|(i, session)| {
            let mut template = CallTemplate::new(&group.tool, group.first + i, None);
            tokio::spawn(closed_loop(
                session,
                move |id, n| template.body(id, n),
                window,
            ))
        })
        .collect();
    tokio::time::sleep_until(window.start.into()).await;
    let cpu_start = CpuTimes::now(pid);
    let mut clients = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (session, stats) = task.await.context("a client task panicked")?;
        group.sessions.push(session);
        clients.push(stats);
    }
    let elapsed = window.start.elapsed();
    let cpu_end = CpuTimes::now(pid);
    Ok(Turn {
        clients,
        elapsed,
        server_cpu: cpu_start.server.zip(cpu_end.server).map(|(a, b)| b - a),
        client_cpu: cpu_end.client - cpu_start.client,
    })
}
