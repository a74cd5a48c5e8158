//! `agent_bench`: whole agent turns in process (`Host::invoke`), only envhost measured.
//!
//! ```text
//! agent_bench [--sessions 1000] [--tools 3] [--sequential 200] [--rounds 3]
//! ```
//!
//! `guests/tool-agent` bound to slack, one seeded slack episode per session, and a model that
//! answers at once in a process of its own (`agent_bench model`, started by the bench): every
//! turn is the model asking for `slack_send_message` `--tools` times, one call per answer, then
//! answering text, so `--tools` + 1 model calls and `--tools` tool calls on the session's episode.
//! The bench runs on one thread (a current-thread runtime, guests on it too), so that thread's
//! CPU time is the host's. Each round has two phases:
//! - sequential: `--sequential` turns one after another, each in a new session: the host's CPU
//!   time per turn and the time from `invoke` to the first event (the model's first delta
//!   relayed), p50;
//! - concurrent: one turn in each of `--sessions` new sessions, all started at once: the wall
//!   time, the host's CPU per turn, and the growth of the process's RSS per session, which then
//!   sits idle with its history in the session store (the episodes' three new messages count).
//!   A first such wave, before the rounds, brings the process to its high-water mark (instances,
//!   fiber stacks, the allocator's arenas); its growth is printed, not counted.
//!
//! Every turn is checked: `--tools` `tool_started` events and a `completed` terminal.

mod model;
mod turns;

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use envhost::agent::model::ModelEndpoint;
use envhost::{AgentConfig, EnvironmentConfig, Host, HostConfig};
use envhost_tests::guest;
use envhost_tests::load::measured::median;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Option<Internal>,
    /// Sessions in the concurrent phase, each with its own slack episode.
    #[arg(long, default_value_t = 1_000)]
    sessions: usize,
    /// Tool calls per turn.
    #[arg(long, default_value_t = 3)]
    tools: usize,
    /// Turns in the sequential phase.
    #[arg(long, default_value_t = 200)]
    sequential: usize,
    /// Rounds of both phases.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

#[derive(Subcommand)]
enum Internal {
    /// Serve the bench's model (the bench starts this itself).
    Model {
        /// Tool calls per turn.
        #[arg(long)]
        tools: usize,
    },
}

/// The model's process, killed when dropped.
struct ModelProcess(Child);

impl Drop for ModelProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `agent_bench model`; answers it and its base URL.
fn start_model(tools: usize) -> anyhow::Result<(ModelProcess, String)> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["model", "--tools", &tools.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .context("starting the model")?;
    let stdout = child.stdout.take().context("the model's stdout")?;
    let process = ModelProcess(child);
    let mut line = String::new();
    std::io::BufReader::new(stdout).read_line(&mut line)?;
    let port: u16 = line.trim().parse().context("the model's port")?;
    Ok((process, format!("http://127.0.0.1:{port}/v1")))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// `median (min–max)` of `values`, scaled by `scale` and printed with `digits` decimals.
fn spread(values: &[u64], scale: f64, digits: usize) -> String {
    let min = values.iter().min().copied().unwrap_or(0) as f64 / scale;
    let max = values.iter().max().copied().unwrap_or(0) as f64 / scale;
    let mid = median(values) as f64 / scale;
    format!("{mid:.digits$} ({min:.digits$}–{max:.digits$})")
}

async fn bench(cli: &Cli) -> anyhow::Result<()> {
    let (_model, url) = start_model(cli.tools)?;
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("slack", guest("slack"))]);
    config.max_episodes = cli.sessions + 16;
    config.max_turns = cli.sessions;
    config
        .agents
        .push(AgentConfig::new("tool", guest("tool_agent"), "slack"));
    config.agents.push(AgentConfig::new(
        "echo",
        guest("conformance_agent"),
        "slack",
    ));
    let endpoint = ModelEndpoint::new(&url, None)?;
    config.model = Some(endpoint.clone());
    let host = std::sync::Arc::new(Host::new(config).await?);
    let episodes = turns::seeded_episodes(&host, cli.sessions).await?;
    turns::sequential(&host, &episodes, "warm", 20, cli.tools).await?;
    let first_wave = turns::concurrent(&host, &episodes, "first", cli.tools).await?;
    println!(
        "first wave: {} concurrent turns in {:.2} s, RSS +{:.1} KiB/session (the instances' \
         and the allocator's high-water mark, not counted below)",
        cli.sessions,
        first_wave.wall_ns as f64 / 1e9,
        first_wave.rss_bytes_per_session as f64 / 1024.0
    );
    let load_before = load_average();
    let mut rounds = Vec::new();
    for round in 0..cli.rounds {
        let seq = turns::sequential(
            &host,
            &episodes,
            &format!("seq{round}"),
            cli.sequential,
            cli.tools,
        )
        .await?;
        let model_ns = turns::model_first_chunk(&host, &endpoint, "slack", cli.sequential).await?;
        let bind_ns = turns::bind(&host, "echo", &episodes[0], cli.sequential).await?;
        let conc = turns::concurrent(&host, &episodes, &format!("conc{round}"), cli.tools).await?;
        println!(
            "round {}: sequential host CPU/turn p50 {:.0} µs, first event p50 {:.0} µs \
             (the model's first chunk {:.0} µs); \
             {} concurrent turns in {:.2} s, host CPU/turn {:.0} µs, first event p50 {:.1} ms, \
             RSS +{:.1} KiB/session",
            round + 1,
            seq.cpu_p50_ns as f64 / 1e3,
            seq.first_event_p50_ns as f64 / 1e3,
            model_ns as f64 / 1e3,
            cli.sessions,
            conc.wall_ns as f64 / 1e9,
            conc.cpu_per_turn_ns as f64 / 1e3,
            conc.first_event_p50_ns as f64 / 1e6,
            conc.rss_bytes_per_session as f64 / 1024.0,
        );
        rounds.push((seq, conc, model_ns, bind_ns));
    }
    type Round = (turns::Sequential, turns::Concurrent, u64, u64);
    let pick = |f: &dyn Fn(&Round) -> u64| -> Vec<u64> { rounds.iter().map(f).collect() };
    println!();
    println!(
        "{} rounds; {} tool calls and {} model calls per turn; load average {} before, {} after",
        cli.rounds,
        cli.tools,
        cli.tools + 1,
        load_before,
        load_average()
    );
    println!("| measure | median (min–max) of rounds |");
    println!("|---|---:|");
    println!(
        "| host CPU per turn, sequential, p50 | {} µs |",
        spread(&pick(&|r| r.0.cpu_p50_ns), 1e3, 0)
    );
    println!(
        "| invoke to first event, sequential, p50 | {} µs |",
        spread(&pick(&|r| r.0.first_event_p50_ns), 1e3, 0)
    );
    println!(
        "| the model's first chunk, by itself, p50 | {} µs |",
        spread(&pick(&|r| r.2), 1e3, 0)
    );
    println!(
        "| invoke to first event less the model's first chunk | {} µs |",
        spread(
            &pick(&|r| r.0.first_event_p50_ns.saturating_sub(r.2)),
            1e3,
            0
        )
    );
    println!(
        "| invoke to first event, an agent that emits at once, p50 | {} µs |",
        spread(&pick(&|r| r.3), 1e3, 0)
    );
    println!(
        "| turn wall time, sequential, p50 | {} µs |",
        spread(&pick(&|r| r.0.wall_p50_ns), 1e3, 0)
    );
    println!(
        "| host CPU per turn, {} concurrent | {} µs |",
        cli.sessions,
        spread(&pick(&|r| r.1.cpu_per_turn_ns), 1e3, 0)
    );
    println!(
        "| {} concurrent turns, wall | {} ms |",
        cli.sessions,
        spread(&pick(&|r| r.1.wall_ns), 1e6, 0)
    );
    println!(
        "| RSS per idle session | {} KiB |",
        spread(&pick(&|r| r.1.rss_bytes_per_session), 1024.0, 1)
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(Internal::Model { tools }) = cli.command {
        return model::serve(tools);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(bench(&cli))
}
