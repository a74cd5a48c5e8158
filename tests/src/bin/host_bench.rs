//! `host_bench`: the embedding API (`envhost::Host`) measured in-process, no HTTP.
//!
//! ```text
//! host_bench density [--episodes 10000] [--messages 10]
//!     creates that many slack episodes (pooled), seeds each with that many messages, and prints
//!     the creation latency percentiles and the process's RSS before, after creating and after
//!     seeding (and per episode).
//! host_bench calls [--seconds 5] [--episodes 1]
//!     calls a trivial tool (counter_counts) in a closed loop on a current_thread runtime (one
//!     core), round-robin over that many counter episodes, and prints calls/s and latency.
//! ```

use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use envhost::host::{EnvironmentConfig, Host, HostConfig};
use envhost::protocol::part::Part;
use envhost::protocol::role::Caller;
use envhost_tests::guest;
use serde_json::{Map, json};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    bench: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// Many live slack episodes: creation latency and memory.
    Density {
        /// Episodes to create.
        #[arg(long, default_value_t = 10_000)]
        episodes: usize,
        /// Messages each episode is seeded with.
        #[arg(long, default_value_t = 10)]
        messages: usize,
    },
    /// Trivial tool calls on one core.
    Calls {
        /// Measured seconds.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Episodes the calls go round.
        #[arg(long, default_value_t = 1)]
        episodes: usize,
    },
}

/// The process's resident set, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

async fn density(episodes: usize, messages: usize) -> anyhow::Result<()> {
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("slack", guest("slack"))]);
    config.max_episodes = episodes;
    let host = Host::new(config).await?;
    let before = rss_kib();
    let mut latencies = Vec::with_capacity(episodes);
    let mut live = Vec::with_capacity(episodes);
    for _ in 0..episodes {
        let started = Instant::now();
        let episode = host.create_episode("slack").await?;
        latencies.push(started.elapsed());
        live.push(episode);
    }
    let created = rss_kib();
    let channels = json!([{"name": "general"}]);
    let seeded: Vec<_> = (0..messages)
        .map(|i| json!({"channel": "general", "text": format!("message {i} of the seed"), "to": "bob"}))
        .collect();
    let part: Part = serde_json::from_value(
        json!({"kind": "data", "data": {"channels": channels, "messages": seeded}}),
    )?;
    for episode in &live {
        episode
            .add_data(vec![part.clone()])
            .await
            .context("seeding")?;
    }
    let after = rss_kib();
    latencies.sort();
    println!(
        "host_bench density: {episodes} slack episodes, {messages} messages each, pooled: {}",
        host.is_pooled()
    );
    println!("| measure | value |\n|---|---|");
    println!(
        "| creation p50 | {:.1} µs |",
        micros(percentile(&latencies, 0.50))
    );
    println!(
        "| creation p99 | {:.1} µs |",
        micros(percentile(&latencies, 0.99))
    );
    println!(
        "| creation max | {:.1} µs |",
        micros(latencies.last().copied().unwrap_or_default())
    );
    println!(
        "| RSS before creating | {:.1} MiB |",
        before as f64 / 1024.0
    );
    println!(
        "| RSS with {episodes} episodes | {:.1} MiB |",
        created as f64 / 1024.0
    );
    println!(
        "| RSS with {episodes} episodes seeded | {:.1} MiB |",
        after as f64 / 1024.0
    );
    println!(
        "| per seeded episode | {:.1} KiB |",
        (after - before) as f64 / episodes as f64
    );
    Ok(())
}

async fn calls(seconds: f64, episodes: usize) -> anyhow::Result<()> {
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("counter", guest("counter"))]);
    config.max_episodes = episodes.max(1);
    let host = Host::new(config).await?;
    let mut live = Vec::new();
    for _ in 0..episodes.max(1) {
        live.push(host.create_episode("counter").await?);
    }
    let caller = Caller::default();
    let warmup = Instant::now() + Duration::from_millis(500);
    while Instant::now() < warmup {
        live[0]
            .call_tool("counter_counts", Map::new(), caller.clone())
            .await;
    }
    let window = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut calls: u64 = 0;
    let mut errors: u64 = 0;
    while started.elapsed() < window {
        for episode in &live {
            let result = episode
                .call_tool("counter_counts", Map::new(), caller.clone())
                .await;
            calls += 1;
            errors += u64::from(result.is_error != Some(false));
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "host_bench calls: counter_counts on {} episode(s), one thread",
        live.len()
    );
    println!("| calls | errors | calls/s | mean µs |\n|---|---|---|---|");
    println!(
        "| {calls} | {errors} | {:.0} | {:.2} |",
        calls as f64 / elapsed,
        elapsed * 1e6 / calls as f64
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match cli.bench {
            Bench::Density { episodes, messages } => density(episodes, messages).await,
            Bench::Calls { seconds, episodes } => calls(seconds, episodes).await,
        }
    })
}
