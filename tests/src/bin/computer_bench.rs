//! `computer_bench`: a computer's two hot calls, `computer_screenshot` and `computer_click` with
//! `screenshot: true`, over MCP, on computer drivers serving the same X display, in one run.
//!
//! ```text
//! computer_bench --target reference=http://127.0.0.1:8001@PID --target envhost=http://127.0.0.1:8002@PID
//!                [--rounds 5] [--calls 20]
//! ```
//!
//! Each round makes `calls` screenshots, then `calls` clicks with `screenshot: true`, on every
//! target in turn (targets interleaved round by round, so a change in the machine's load falls
//! on all of them). A call is measured end to end, as its wall time on this client from the
//! request's first byte to the answer's last, and as the server's CPU time around it. A click
//! lands on a fixed empty point of the desktop. Every answer must be a result with an image.
//!
//! It prints one Markdown table per call: the median wall time in ms with the min–max of the
//! rounds' medians, the ratio of the first target's (the reference's) median to each other's,
//! and the median server CPU per call.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Parser;
use serde_json::{Value, json};

use envhost_tests::load::conn::Conn;
use envhost_tests::load::data_plane::fetch_card;
use envhost_tests::load::mcp::{Session, ToolOutcome};
use envhost_tests::load::measured::{MeasuredServer, median};

/// A call's longest wait.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Parser)]
#[command(about = "computer_screenshot and computer_click over MCP: wall time and server CPU")]
struct Args {
    /// A server: NAME=URL@PID (the first is the one the others are compared with).
    #[arg(long = "target", required = true)]
    targets: Vec<String>,
    /// Rounds; each makes `calls` calls of each kind on every target.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Calls of each kind a round.
    #[arg(long, default_value_t = 20)]
    calls: usize,
}

/// The calls measured: a tool and its arguments.
fn calls() -> [(&'static str, &'static str, Value); 2] {
    [
        ("screenshot", "computer_screenshot", json!({})),
        (
            "click + screenshot",
            "computer_click",
            json!({"x": 1200, "y": 760, "screenshot": true}),
        ),
    ]
}

/// One target's samples of one call: per round, wall and CPU nanoseconds per call.
#[derive(Default)]
struct Samples {
    wall_ns: Vec<Vec<u64>>,
    cpu_ns: Vec<u64>,
}

/// Makes `count` calls of `tool` on `session`, into `samples` as one round.
async fn round(
    server: &MeasuredServer,
    session: &mut Session,
    tool: &str,
    arguments: &Value,
    count: usize,
    samples: &mut Samples,
) -> anyhow::Result<()> {
    let mut walls = Vec::with_capacity(count);
    for _ in 0..count {
        let cpu0 = server.cpu_ns()?;
        let started = Instant::now();
        let outcome = session.call(tool, arguments, CALL_TIMEOUT).await?;
        walls.push(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        samples.cpu_ns.push(server.cpu_ns()?.saturating_sub(cpu0));
        if outcome != ToolOutcome::Ok {
            bail!("{tool} failed on {}: {outcome:?}", server.name);
        }
    }
    samples.wall_ns.push(walls);
    Ok(())
}

fn ms(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 10.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.2}")
    }
}

fn print_table(label: &str, servers: &[MeasuredServer], samples: &[Samples]) {
    println!("\n### {label}: wall ms per call, end to end (median, min–max of rounds' medians)\n");
    println!("| driver | wall p50 | rounds | ÷ first | server CPU p50 |");
    println!("|---|---:|---:|---:|---:|");
    let first = median(&samples[0].wall_ns.concat());
    for (server, s) in servers.iter().zip(samples) {
        let all = s.wall_ns.concat();
        let p50 = median(&all);
        let rounds: Vec<u64> = s.wall_ns.iter().map(|r| median(r)).collect();
        let (lo, hi) = (
            rounds.iter().min().copied().unwrap_or(0),
            rounds.iter().max().copied().unwrap_or(0),
        );
        let ratio = if p50 > 0 {
            format!("{:.1}×", first as f64 / p50 as f64)
        } else {
            "–".into()
        };
        println!(
            "| {} | {} | {}–{} | {ratio} | {} |",
            server.name,
            ms(p50),
            ms(lo),
            ms(hi),
            ms(median(&s.cpu_ns))
        );
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let servers: Vec<MeasuredServer> = args
        .targets
        .iter()
        .map(|t| MeasuredServer::parse(t))
        .collect::<Result<_, _>>()?;
    let mut sessions = Vec::new();
    for server in &servers {
        let mut conn = Conn::open(&server.target).await?;
        let card = fetch_card(&mut conn, &server.target).await?;
        let uri = server.target.uri(card.mcp_path())?;
        let session = Session::open(server.target.clone(), uri, "bench".into())
            .await
            .with_context(|| format!("opening a session on {}", server.name))?;
        sessions.push(session);
    }
    let calls = calls();
    let mut samples: Vec<Vec<Samples>> = calls
        .iter()
        .map(|_| servers.iter().map(|_| Samples::default()).collect())
        .collect();
    for (session, server) in sessions.iter_mut().zip(&servers) {
        for (_, tool, arguments) in &calls {
            round(server, session, tool, arguments, 2, &mut Samples::default())
                .await
                .with_context(|| format!("warming up {}", server.name))?;
        }
    }
    for r in 0..args.rounds {
        eprintln!("[computer_bench] round {} of {}", r + 1, args.rounds);
        for (c, (_, tool, arguments)) in calls.iter().enumerate() {
            for (t, (session, server)) in sessions.iter_mut().zip(&servers).enumerate() {
                round(
                    server,
                    session,
                    tool,
                    arguments,
                    args.calls,
                    &mut samples[c][t],
                )
                .await
                .with_context(|| format!("{tool} on {}", server.name))?;
            }
        }
    }
    for session in &mut sessions {
        session.close().await;
    }
    for ((label, _, _), by_target) in calls.iter().zip(&samples) {
        print_table(label, &servers, by_target);
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("computer_bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}
