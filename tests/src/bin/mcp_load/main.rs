//! `mcp_load`: a closed-loop load client for the MCP tools of an agentenv environment server.
//!
//! ```text
//! mcp_load --url http://127.0.0.1:18765 --clients 8 --seconds 10 [--warmup 1]
//!          [--episodes N [--environment slack]]
//!          [--env-name slack] [--tool slack_send_message] [--arguments JSON] [--no-seed]
//!          [--threads 1] [--timeout 30] [--server-pid PID] [--json]
//! ```
//!
//! It seeds the environment through the data plane (`data/reset`, then `data/add` of a data part
//! with the channel `bench`, as `shared/bench/agentenv_bench.py` does), then runs `--clients`
//! clients, each with its own keep-alive HTTP/1.1 connection and its own MCP session (role
//! `bench-<i>`), calling `<env>_send_message(channel "bench", text "bench <i> <n>", to "sink")` in
//! a closed loop. `--tool` and `--arguments` call another tool with fixed arguments instead, and
//! `--no-seed` skips the seeding, for environments other than slack (e.g. `counter_add` with
//! `{"by": 1}`; the counter serves no `data/add`).
//!
//! With `--episodes N` (an envhost server) it first creates N episodes of `--environment` with
//! `POST /episodes` (a few at a time) and seeds each, then client `i` loads episode `i % N`
//! (`/episodes/<id>/mcp`); at the end it deletes them. Without it every client loads the URL's
//! own (root) episode. Calls that start within the first `--warmup` seconds are not counted; the
//! `--seconds` after them are. Every answer (SSE or JSON) is parsed and must be a result with
//! `isError` false; anything else is an error. At the end it prints calls, errors, calls/s, the
//! latency percentiles, its own CPU seconds over the measured window (near `elapsed × threads`
//! means the client was the bottleneck), and with `--server-pid` the server's CPU seconds over
//! the same window and its memory before and after (before seeding or creating episodes); then
//! it closes the sessions and resets the environment (or deletes the episodes it created).
//!
//! To stay cheap it speaks plain HTTP/1.1 over its own keep-alive connections
//! ([`envhost_tests::load::conn`]), each driven by the task that uses it, reuses prebuilt headers
//! and a request-body template, and deserializes only the fields it checks. It allocates with
//! mimalloc: the client shares the machine with the server it measures, and with 1,000
//! connections glibc's allocator cost it about 3 µs more CPU per call (12–15 µs against
//! 11–11.5 µs), CPU the server then lacked.

mod report;
mod run;

use std::process::ExitCode;

use anyhow::bail;
use clap::Parser;

use crate::report::Report;
use crate::run::run;

/// The client's allocator (see the module documentation).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Closed-loop MCP `tools/call` load against an agentenv environment server.
#[derive(Parser, Debug)]
#[command(name = "mcp_load")]
struct Args {
    /// The environment server's base URL (plain http).
    #[arg(long, default_value = "http://127.0.0.1:18765")]
    url: String,
    /// Concurrent clients, each with its own connection and MCP session.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Episodes to spread the clients over: created (and seeded) with `POST /episodes` before the
    /// run, client i on episode i % N, deleted after it. Without it the clients load the URL's
    /// own episode.
    #[arg(long)]
    episodes: Option<usize>,
    /// The environment of the episodes `--episodes` creates; default: the server's default (the
    /// root episode's environment).
    #[arg(long, requires = "episodes")]
    environment: Option<String>,
    /// Length of the measured window, in seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Seconds of calls before the measured window, not counted.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// The environment's name (the tool-name prefix); default: the card's name.
    #[arg(long)]
    env_name: Option<String>,
    /// The tool to call; default: `<env-name>_send_message`.
    #[arg(long)]
    tool: Option<String>,
    /// The arguments of every call, a JSON object; default: the slack message
    /// `{"channel": "bench", "to": "sink", "text": "bench <client> <n>"}`.
    #[arg(long, value_parser = parse_arguments)]
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    /// Do not seed the environment (or the episodes) through `data/add` before the run.
    #[arg(long)]
    no_seed: bool,
    /// Runtime threads: 1 runs every client on one current_thread runtime, more a multi-thread one.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds a call may take before it counts as an error (and its connection is reopened).
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// The server's process id: report its CPU seconds and memory (VmRSS, VmHWM) from /proc.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Also print the results as one JSON line.
    #[arg(long)]
    json: bool,
}

impl Args {
    /// Rejects values the run cannot use.
    fn validate(&self) -> anyhow::Result<()> {
        if self.clients == 0 || self.threads == 0 || self.episodes == Some(0) {
            bail!("--clients, --threads and --episodes must be at least 1");
        }
        for (name, value) in [
            ("--seconds", self.seconds),
            ("--warmup", self.warmup),
            ("--timeout", self.timeout),
        ] {
            if !(0.0..=1e6).contains(&value) {
                bail!("{name} must be a number of seconds between 0 and 1e6");
            }
        }
        if self.seconds == 0.0 || self.timeout == 0.0 {
            bail!("--seconds and --timeout must be more than 0");
        }
        Ok(())
    }
}

/// Parses `--arguments`: a JSON object.
fn parse_arguments(text: &str) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    Ok(serde_json::from_str(text)?)
}

/// Parses the arguments, runs the bench and prints its report; on failure prints why and exits 1.
fn main() -> ExitCode {
    let args = Args::parse();
    match bench(&args) {
        Ok(report) => {
            print!("{}", report.table());
            if args.json {
                println!("{}", report.json());
            }
            match &report.cleanup {
                None => ExitCode::SUCCESS,
                Some(e) => {
                    eprintln!("mcp_load: cleaning up after the run failed: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("mcp_load: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Checks the arguments and runs the bench on the runtime they ask for.
fn bench(args: &Args) -> anyhow::Result<Report> {
    args.validate()?;
    runtime(args.threads)?.block_on(run(args))
}

/// A current_thread runtime for one thread, else a multi-thread one with `threads` workers.
fn runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(threads);
        builder
    };
    Ok(builder.enable_all().build()?)
}
