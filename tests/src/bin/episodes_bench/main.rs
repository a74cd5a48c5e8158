//! `episodes_bench`: many episodes in one envhost server, over HTTP.
//!
//! ```text
//! episodes_bench admission --url URL [--creates 20000] [--concurrency 64] [--environment slack]
//!                          [--settle 0] [--server-pid PID] [--timeout 30] [--json]
//!     sends that many `POST /episodes`, counts the answers by status (201, 503, other), checks
//!     every 503 is `too_many_episodes` with a Retry-After, that the server still answers (the
//!     card, a tool call on a created episode, /metrics) and that deleting an episode makes room
//!     for a new one; then deletes every episode it created. Prints the counts, the latency of
//!     the creates, and with --server-pid the server's VmRSS before, after the creates and after
//!     the deletes (--settle seconds after them).
//! episodes_bench isolation --url URL [--seconds 10] [--warmup 1] [--clients 8]
//!                          [--environment faulty] [--echo-tool echo] [--spin-tool spin]
//!                          [--server-pid PID] [--timeout 30] [--json]
//!     creates a "spinner" episode and --clients others; each client calls `echo` on its own
//!     episode in a closed loop, first alone (quiet), then while one more task calls `spin` on
//!     the spinner over and over (noisy; each spin runs into the server's --cpu-deadline-ms and
//!     answers `deadline_exceeded`). Prints the echo latency and rate of each phase, the ratio of
//!     their p99s (the target: at most 2) and the spins; then deletes the episodes.
//! episodes_bench spread --url URL [--episodes 1000] [--clients 8] [--turns 10] [--seconds 2]
//!                       [--warmup 0.5] [--environment slack] [--spread-clients N]
//!                       [--share-connections] [--server-pid PID] [--timeout 30] [--json]
//!     seeds the root episode and creates --episodes seeded episodes, then has two loads take
//!     --turns turns each, in ABBA order: --clients clients on the root episode, and one client
//!     on each created episode, every session with its own connection, every client calling
//!     `<name>_send_message` in a closed loop; the root episode is seeded afresh before each of
//!     its turns. --spread-clients N has N clients take the created episodes' sessions in turn
//!     instead, --share-connections each of them over one connection. Prints each load's calls/s
//!     over all its turns, their ratio (the target: spread at least 80% of single) and the
//!     turn-by-turn ratios, then deletes the episodes and resets the root episode.
//! episodes_bench seeding --url URL [--episodes 10000] [--messages 200] [--concurrency 8]
//!                        [--environment slack] [--server-pid PID] [--timeout 30] [--json]
//!     creates --episodes episodes with `POST /episodes {"environment", "parts"}`, each with a
//!     distinct seed of --messages messages; snapshots one of them and deletes them; restores
//!     the snapshot once and waits 2 s (the snapshot's image is made meanwhile); then creates
//!     --episodes episodes with `POST /episodes {"snapshot"}`. Prints the seconds each way (and
//!     the server's CPU seconds), checks a tenth of the episodes' data, and deletes them.
//! ```
//!
//! Each prints a Markdown table, and with --json one JSON line too; it exits 1 when a check
//! fails (or the bench cannot run).

mod admission;
mod isolation;
mod seeding;
mod server;
mod spread;
mod table;

use std::process::ExitCode;

use anyhow::bail;
use clap::{Parser, Subcommand};
use serde_json::Value;

/// Benches of many episodes in one envhost server.
#[derive(Parser)]
#[command(name = "episodes_bench")]
struct Cli {
    #[command(subcommand)]
    bench: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// Creates past the episode cap: answers, latency, the server afterwards, clean-up.
    Admission(admission::Args),
    /// A spinning episode's effect on other episodes' calls.
    Isolation(isolation::Args),
    /// Many episodes with a session each against one episode, in turns.
    Spread(spread::Args),
    /// Episodes created seeded: with parts, and from one snapshot.
    Seeding(seeding::Args),
}

/// What every bench takes.
#[derive(clap::Args, Debug)]
struct Common {
    /// The envhost server's base URL (plain http).
    #[arg(long, default_value = "http://127.0.0.1:18765")]
    url: String,
    /// The server's process id: report its memory (and CPU seconds) from /proc.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Seconds a request may take before it counts as an error.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Also print the results as one JSON line.
    #[arg(long)]
    json: bool,
}

impl Common {
    /// Rejects values the benches cannot use.
    fn validate(&self) -> anyhow::Result<()> {
        if !(self.timeout > 0.0 && self.timeout <= 1e6) {
            bail!("--timeout must be a number of seconds above 0 and up to 1e6");
        }
        Ok(())
    }
}

/// What a bench answers: its report, and whether its checks held.
struct Outcome {
    /// The Markdown report.
    table: String,
    /// The report as one JSON object.
    json: Value,
    /// Whether every check held.
    ok: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (common, bench) = match &cli.bench {
        Bench::Admission(args) => (&args.common, "admission"),
        Bench::Isolation(args) => (&args.common, "isolation"),
        Bench::Spread(args) => (&args.common, "spread"),
        Bench::Seeding(args) => (&args.common, "seeding"),
    };
    let outcome = common.validate().and_then(|()| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(async {
                match &cli.bench {
                    Bench::Admission(args) => admission::run(args).await,
                    Bench::Isolation(args) => isolation::run(args).await,
                    Bench::Spread(args) => spread::run(args).await,
                    Bench::Seeding(args) => seeding::run(args).await,
                }
            })
    });
    match outcome {
        Ok(outcome) => {
            print!("{}", outcome.table);
            if common.json {
                println!("{}", outcome.json);
            }
            if outcome.ok {
                ExitCode::SUCCESS
            } else {
                eprintln!("episodes_bench {bench}: a check failed (see the report)");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("episodes_bench {bench}: {e:#}");
            ExitCode::FAILURE
        }
    }
}
