//! One phase: the clients' closed loops of echo calls, and the spinner in the noisy one.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use envhost_tests::load::closed_loop::{Client, Window, closed_loop};
use envhost_tests::load::mcp::{Session, ToolOutcome, tool_call_body};
use envhost_tests::load::procfs::CpuTimes;
use envhost_tests::load::stats::{ClientStats, Summary};
use serde_json::json;

use super::Args;

/// The code of an answer that ran into the CPU deadline.
pub(super) const DEADLINE_EXCEEDED: &str = "deadline_exceeded";

/// What the spinner saw over a phase.
#[derive(Default)]
struct Spins {
    /// Spins that answered `deadline_exceeded`, and their latencies.
    deadline: ClientStats,
    /// Spins that answered anything else, by what (the code, `ok`, or the error).
    other: BTreeMap<String, u64>,
}

/// One phase's measurements.
pub(super) struct Phase {
    /// The echo calls.
    pub(super) echo: Summary,
    /// The first failures of the echo clients.
    pub(super) failures: Vec<String>,
    /// The measured window.
    pub(super) elapsed: Duration,
    /// The server's CPU seconds over it.
    pub(super) server_cpu: Option<f64>,
    /// This process' CPU seconds over it.
    pub(super) client_cpu: f64,
    /// What the spinner saw (in the noisy phase), counting spins that started in the window.
    pub(super) spins: Option<(Summary, BTreeMap<String, u64>)>,
}

/// One phase: the clients' closed loops of echo calls through the warmup and the window, with the
/// spinner spinning all along when there is one.
pub(super) async fn phase(
    args: &Args,
    clients: Vec<Session>,
    spinner: Option<&mut Session>,
) -> anyhow::Result<(Vec<Session>, Phase)> {
    let pid = args.common.server_pid;
    let window = Window::after(
        args.warmup,
        args.seconds,
        Duration::from_secs_f64(args.common.timeout),
    )
    .paced(args.rate);
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(i, session)| {
            let tool = args.echo_tool.clone();
            let body = move |id, n| tool_call_body(id, &tool, &json!({"text": format!("{i} {n}")}));
            tokio::spawn(closed_loop(Client::single(session), body, window))
        })
        .collect();
    let clients = async {
        tokio::time::sleep_until(window.start.into()).await;
        let cpu_start = CpuTimes::now(pid);
        let mut finished = Vec::with_capacity(tasks.len());
        for task in tasks {
            finished.push(task.await.context("a client task panicked")?);
        }
        let elapsed = window.start.elapsed();
        let cpu_end = CpuTimes::now(pid);
        anyhow::Ok((finished, elapsed, cpu_start, cpu_end))
    };
    let (clients, spins) = match spinner {
        None => (clients.await, None),
        Some(spinner) => {
            let (clients, spins) = tokio::join!(clients, spin(spinner, &args.spin_tool, window));
            (clients, Some(spins))
        }
    };
    let (finished, elapsed, cpu_start, cpu_end) = clients?;
    let (clients, mut stats): (Vec<Client>, Vec<_>) = finished.into_iter().unzip();
    let sessions = clients
        .into_iter()
        .flat_map(Client::into_sessions)
        .collect();
    let failures = stats
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.failure(i))
        .collect();
    let phase = Phase {
        echo: Summary::of(&mut stats, elapsed),
        failures,
        elapsed,
        server_cpu: cpu_start.server.zip(cpu_end.server).map(|(a, b)| b - a),
        client_cpu: cpu_end.client - cpu_start.client,
        spins: spins.map(|mut s| {
            (
                Summary::of(std::slice::from_mut(&mut s.deadline), elapsed),
                s.other,
            )
        }),
    };
    Ok((sessions, phase))
}

/// The spinner: calls `tool` over and over until the window ends; counts (and times) the calls
/// that start in the window by how they answer.
async fn spin(session: &mut Session, tool: &str, window: Window) -> Spins {
    let mut spins = Spins::default();
    let mut now = Instant::now();
    while now < window.end {
        let outcome = session.call(tool, &json!({}), window.call_timeout).await;
        let done = Instant::now();
        if now >= window.start {
            match outcome {
                Ok(ToolOutcome::Failed(Some(code))) if code == DEADLINE_EXCEEDED => {
                    spins.deadline.record(Ok(()), done - now);
                }
                Ok(ToolOutcome::Failed(code)) => {
                    *spins
                        .other
                        .entry(code.unwrap_or_else(|| "isError without code".into()))
                        .or_default() += 1;
                }
                Ok(ToolOutcome::Ok) => *spins.other.entry("ok".into()).or_default() += 1,
                Err(e) => *spins.other.entry(format!("{e:#}")).or_default() += 1,
            }
        }
        now = done;
        if session.conn.is_closed() {
            if let Err(e) = session.reconnect().await {
                *spins.other.entry(format!("{e:#}")).or_default() += 1;
                break;
            }
            now = Instant::now();
        }
    }
    spins
}
