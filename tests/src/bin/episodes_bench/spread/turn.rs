//! One turn of a load: its clients' closed loops of `<name>_send_message` through a warmup and
//! a measured window, and what the turns of a load add up to.

use std::time::Duration;

use envhost_tests::load::closed_loop::{Client, Window, run_clients};
use envhost_tests::load::mcp::Session;
use envhost_tests::load::procfs::MachineTimes;
use envhost_tests::load::stats::ClientStats;

use super::Args;

/// The clients of one load, their sessions kept open from turn to turn.
pub(super) struct Group {
    /// The clients.
    clients: Vec<Client>,
    /// The tool they call.
    tool: String,
    /// The number of the first client (client numbers tell the message texts apart).
    first: usize,
}

impl Group {
    /// `clients` clients (1 to `sessions.len()`) numbered from `first`, calling `tool`: client
    /// `i` takes sessions `i`, `i + clients`, `i + 2 × clients`, … of `sessions` in turn, over
    /// one connection when `shared` (see [`Client`]).
    pub(super) fn new(
        sessions: Vec<Session>,
        clients: usize,
        shared: bool,
        tool: &str,
        first: usize,
    ) -> Self {
        let mut shares: Vec<Vec<Session>> = (0..clients).map(|_| Vec::new()).collect();
        for (i, session) in sessions.into_iter().enumerate() {
            shares[i % clients].push(session);
        }
        Self {
            clients: shares
                .into_iter()
                .map(|share| Client::new(share, shared))
                .collect(),
            tool: tool.to_owned(),
            first,
        }
    }

    /// Closes every session.
    pub(super) async fn close(&mut self) {
        for client in &mut self.clients {
            client.close().await;
        }
    }
}

/// One turn's measurements.
pub(super) struct Turn {
    /// Each client's calls in the window.
    stats: Vec<ClientStats>,
    /// The window, from the end of the warmup to the last client's last answer.
    elapsed: Duration,
    /// The server's CPU seconds over it.
    server_cpu: Option<f64>,
    /// This process' CPU seconds over it.
    client_cpu: f64,
    /// The machine's CPU ticks over it, when /proc/stat could be read.
    machine: Option<MachineTimes>,
}

/// What the turns of one load add up to.
#[derive(Default)]
pub(super) struct Load {
    /// Each client's calls over every turn.
    pub(super) stats: Vec<ClientStats>,
    /// The measured windows, added up.
    pub(super) elapsed: Duration,
    /// Each turn's successful calls per second, in order.
    pub(super) rates: Vec<f64>,
    /// The server's CPU seconds over each window, when it could be read.
    server_cpu: Vec<Option<f64>>,
    /// This process' CPU seconds over the windows.
    pub(super) client_cpu: f64,
    /// The machine's CPU ticks over each window, when they could be read.
    pub(super) machine: Vec<Option<MachineTimes>>,
}

impl Load {
    /// The server's CPU seconds over every window, when it could be read in each.
    pub(super) fn server_cpu(&self) -> Option<f64> {
        self.server_cpu.iter().copied().sum()
    }

    /// The machine's CPU ticks over every window, when they could be read in each.
    pub(super) fn machine(&self) -> Option<MachineTimes> {
        self.machine.iter().copied().sum()
    }

    /// Adds a turn.
    pub(super) fn add(&mut self, turn: Turn) {
        let calls: usize = turn.stats.iter().map(ClientStats::calls).sum();
        self.rates.push(calls as f64 / turn.elapsed.as_secs_f64());
        self.server_cpu.push(turn.server_cpu);
        self.client_cpu += turn.client_cpu;
        self.machine.push(turn.machine);
        self.elapsed += turn.elapsed;
        if self.stats.is_empty() {
            self.stats = turn.stats;
        } else {
            for (all, new) in self.stats.iter_mut().zip(turn.stats) {
                all.merge(new);
            }
        }
    }
}

/// One turn of `group`: its clients' closed loops through `args.warmup` seconds and a window of
/// `args.seconds`.
pub(super) async fn turn(args: &Args, group: &mut Group) -> anyhow::Result<Turn> {
    let window = Window::after(
        args.warmup,
        args.seconds,
        Duration::from_secs_f64(args.common.timeout),
    );
    let clients = std::mem::take(&mut group.clients);
    let finished = run_clients(
        clients,
        &group.tool,
        group.first,
        None,
        window,
        args.common.server_pid,
    )
    .await?;
    let (clients, stats) = finished.clients.into_iter().unzip();
    group.clients = clients;
    Ok(Turn {
        stats,
        elapsed: finished.elapsed,
        server_cpu: finished
            .cpu_start
            .server
            .zip(finished.cpu_end.server)
            .map(|(a, b)| b - a),
        client_cpu: finished.cpu_end.client - finished.cpu_start.client,
        machine: finished
            .cpu_end
            .machine
            .zip(finished.cpu_start.machine)
            .map(|(end, start)| end.since(start)),
    })
}
