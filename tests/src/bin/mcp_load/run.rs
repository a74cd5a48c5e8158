//! The run: seeding the environment, the clients' closed loops over the warmup and the measured
//! window, and the clean-up after them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use http::Uri;

use crate::Args;
use crate::conn::{Conn, Target};
use crate::data_plane::{fetch_card, reset, seed};
use crate::mcp::{CallTemplate, Session};
use crate::procfs::{CpuTimes, Memory, proc_memory};
use crate::report::{Report, ServerUsage};
use crate::stats::{ClientStats, Summary};

/// The whole bench: seed, load, clean up (the environment is reset even when the load fails).
pub(crate) async fn run(args: &Args) -> anyhow::Result<Report> {
    let target = Arc::new(Target::parse(&args.url)?);
    let mut control = Conn::open(&target).await?;
    let card = fetch_card(&mut control, &target).await?;
    let env_name = args.env_name.clone().unwrap_or_else(|| card.name.clone());
    let tool = args
        .tool
        .clone()
        .unwrap_or_else(|| format!("{env_name}_send_message"));
    let mcp_path = target.path(card.mcp_path());

    let memory_before = args.server_pid.and_then(proc_memory);
    seed(&mut control, &target).await?;
    drop(control);
    let measured = measure(args, &target, &mcp_path, &tool).await;
    let cleanup = cleanup(&target).await.err().map(|e| format!("{e:#}"));
    let mut measured = measured?;

    Ok(Report {
        url: format!("http://{}{mcp_path}", target.authority_str()),
        tool,
        clients: args.clients,
        threads: args.threads,
        warmup: args.warmup,
        elapsed: measured.elapsed,
        summary: Summary::of(&mut measured.clients, measured.elapsed),
        client_cpu: measured.cpu_end.client - measured.cpu_start.client,
        server: args.server_pid.map(|pid| ServerUsage {
            pid,
            cpu: measured
                .cpu_start
                .server
                .zip(measured.cpu_end.server)
                .map(|(a, b)| b - a),
            before: memory_before,
            after: measured.memory_after,
        }),
        failures: measured
            .clients
            .iter()
            .enumerate()
            .filter_map(|(i, stats)| stats.failure(i))
            .collect(),
        cleanup,
    })
}

/// Resets the environment after the run, over a new connection.
async fn cleanup(target: &Target) -> anyhow::Result<()> {
    let mut conn = Conn::open(target).await?;
    reset(&mut conn, target).await
}

/// What [`measure`] measured.
struct Measured {
    /// Each client's counts and latencies.
    clients: Vec<ClientStats>,
    /// The measured window, from the end of the warmup to the last client's last answer.
    elapsed: Duration,
    /// CPU times at the start of the window.
    cpu_start: CpuTimes,
    /// CPU times at its end.
    cpu_end: CpuTimes,
    /// The server's memory at its end.
    memory_after: Option<Memory>,
}

/// Opens a session per client, runs their loops through the warmup and the window, and closes
/// the sessions.
async fn measure(
    args: &Args,
    target: &Arc<Target>,
    mcp_path: &str,
    tool: &str,
) -> anyhow::Result<Measured> {
    let uri: Uri = mcp_path.parse().context("the card's MCP path")?;
    let sessions = futures::future::try_join_all(
        (0..args.clients).map(|i| Session::open(target.clone(), uri.clone(), format!("bench-{i}"))),
    )
    .await?;
    let start = Instant::now();
    let window = Window {
        start: start + Duration::from_secs_f64(args.warmup),
        end: start + Duration::from_secs_f64(args.warmup + args.seconds),
        call_timeout: Duration::from_secs_f64(args.timeout),
    };
    let tasks: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, session)| tokio::spawn(load(session, CallTemplate::new(tool, i), window)))
        .collect();

    tokio::time::sleep_until(window.start.into()).await;
    let cpu_start = CpuTimes::now(args.server_pid);
    let mut finished = Vec::with_capacity(tasks.len());
    for task in tasks {
        finished.push(task.await.context("a client task panicked")?);
    }
    let elapsed = window.start.elapsed();
    let cpu_end = CpuTimes::now(args.server_pid);
    let memory_after = args.server_pid.and_then(proc_memory);

    let mut clients = Vec::with_capacity(finished.len());
    for (mut session, stats) in finished {
        session.close().await;
        clients.push(stats);
    }
    Ok(Measured {
        clients,
        elapsed,
        cpu_start,
        cpu_end,
        memory_after,
    })
}

/// When a client's calls count, and how long one may take.
#[derive(Clone, Copy, Debug)]
struct Window {
    /// Calls started from here on are counted (the warmup is over).
    start: Instant,
    /// No call starts from here on.
    end: Instant,
    /// The longest a call may take.
    call_timeout: Duration,
}

/// One client's closed loop over its session; answers the session (to close it) and what it
/// measured.
async fn load(
    mut session: Session,
    mut template: CallTemplate,
    window: Window,
) -> (Session, ClientStats) {
    let mut stats = ClientStats::default();
    let mut now = Instant::now();
    let mut n = 0u64;
    while now < window.end {
        let id = session.next_id();
        let outcome = session
            .call_tool(template.body(id, n), id, window.call_timeout)
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
