//! `host_bench`: the embedding API (`envhost::Host`) measured in-process, no HTTP.
//!
//! ```text
//! host_bench density [--episodes 10000] [--messages 10]
//!     creates that many slack episodes (pooled), seeds each with that many messages, and prints
//!     the creation latency percentiles and the process's RSS before, after creating and after
//!     seeding (and per episode).
//! host_bench calls [--seconds 5] [--episodes 1] [--slack] [--memory-mib 256]
//!     calls a trivial tool (counter_counts) in a closed loop on a current_thread runtime (one
//!     core), round-robin over that many counter episodes, and prints calls/s and latency; with
//!     --slack, slack_send_message as alice on slack episodes seeded with a channel instead.
//! host_bench fork [--calls 1000] [--forks 100]
//!     makes that many slack_send_message calls on a seeded slack episode, then forks it that
//!     many times (snapshot + restore by replay, each fork dropped after), and prints the fork
//!     latency percentiles and the snapshot file's size.
//! host_bench restore [--calls 1000] [--restores 100]
//!     snapshots such an episode, makes the snapshot's pre-initialised image, and restores the
//!     snapshot that many times from it (each restored episode checked and dropped). Prints the
//!     restore percentiles, and the time and RSS making the image took, for it (which also
//!     compiles the instrumented component) and for a snapshot taken one call later.
//! ```

use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use envhost::protocol::part::Part;
use envhost::protocol::role::Caller;
use envhost::{EnvironmentConfig, Host, HostConfig};
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
        /// Call slack_send_message on seeded slack episodes rather than counter_counts.
        #[arg(long)]
        slack: bool,
        /// Linear memory per episode, in MiB: the pool reserves this much address space per
        /// episode (valgrind allows tens of GiB in all).
        #[arg(long, default_value_t = 256)]
        memory_mib: usize,
    },
    /// Forks by replay of an episode after many tool calls.
    Fork {
        /// Tool calls made before forking.
        #[arg(long, default_value_t = 1_000)]
        calls: usize,
        /// Forks measured.
        #[arg(long, default_value_t = 100)]
        forks: usize,
    },
    /// Restores of a snapshot of an episode after many tool calls, from its image.
    Restore {
        /// Tool calls made before the snapshot.
        #[arg(long, default_value_t = 1_000)]
        calls: usize,
        /// Restores measured after the first.
        #[arg(long, default_value_t = 100)]
        restores: usize,
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

/// What `host_bench calls` calls: the environment, how an episode is seeded, the tool, its
/// arguments and the caller.
struct CallSpec {
    environment: &'static str,
    seed: Option<Part>,
    tool: &'static str,
    arguments: Map<String, serde_json::Value>,
    caller: Caller,
}

impl CallSpec {
    fn new(slack: bool) -> anyhow::Result<Self> {
        if !slack {
            return Ok(Self {
                environment: "counter",
                seed: None,
                tool: "counter_counts",
                arguments: Map::new(),
                caller: Caller::default(),
            });
        }
        let seed = json!({"kind": "data", "data": {"channels": [{"name": "general"}]}});
        let arguments =
            json!({"channel": "general", "text": "a message of the bench", "to": "bob"});
        Ok(Self {
            environment: "slack",
            seed: Some(serde_json::from_value(seed)?),
            tool: "slack_send_message",
            arguments: arguments.as_object().cloned().unwrap_or_default(),
            caller: Caller {
                role: Some("alice".into()),
                session: None,
            },
        })
    }

    async fn call(&self, episode: &envhost::Episode) -> envhost::protocol::ToolResult {
        episode
            .call_tool(self.tool, self.arguments.clone(), self.caller.clone())
            .await
    }
}

async fn calls(
    seconds: f64,
    episodes: usize,
    slack: bool,
    memory_mib: usize,
) -> anyhow::Result<()> {
    let spec = CallSpec::new(slack)?;
    let mut environment = EnvironmentConfig::new(spec.environment, guest(spec.environment));
    environment.limits.memory_bytes = memory_mib << 20;
    let mut config = HostConfig::new(vec![environment]);
    config.max_episodes = episodes.max(1);
    let host = Host::new(config).await?;
    let mut live = Vec::new();
    for _ in 0..episodes.max(1) {
        let episode = host.create_episode(spec.environment).await?;
        if let Some(seed) = &spec.seed {
            episode.add_data(vec![seed.clone()]).await?;
        }
        live.push(episode);
    }
    let warmup = Instant::now() + Duration::from_millis(500);
    while Instant::now() < warmup {
        spec.call(&live[0]).await;
    }
    let window = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut calls: u64 = 0;
    let mut errors: u64 = 0;
    while started.elapsed() < window {
        for episode in &live {
            let result = spec.call(episode).await;
            calls += 1;
            errors += u64::from(result.is_error);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "host_bench calls: {} on {} episode(s), one thread",
        spec.tool,
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

/// A host with a slack episode seeded with a channel and then sent `calls` messages.
async fn slack_after(calls: usize) -> anyhow::Result<(Host, std::sync::Arc<envhost::Episode>)> {
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("slack", guest("slack"))]);
    config.max_episodes = 4;
    let host = Host::new(config).await?;
    let episode = host.create_episode("slack").await?;
    let part: Part = serde_json::from_value(
        json!({"kind": "data", "data": {"channels": [{"name": "general"}]}}),
    )?;
    episode.add_data(vec![part]).await?;
    let caller = Caller {
        role: Some("alice".into()),
        session: None,
    };
    for i in 0..calls {
        let arguments = json!({"channel": "general", "text": format!("message {i}"), "to": "bob"});
        let result = episode
            .call_tool(
                "slack_send_message",
                arguments.as_object().cloned().unwrap_or_default(),
                caller.clone(),
            )
            .await;
        anyhow::ensure!(!result.is_error, "call {i} failed: {result:?}");
    }
    Ok((host, episode))
}

async fn fork(calls: usize, forks: usize) -> anyhow::Result<()> {
    let (host, episode) = slack_after(calls).await?;
    let mut latencies = Vec::with_capacity(forks);
    let mut snapshot = String::new();
    for _ in 0..forks {
        let started = Instant::now();
        let (id, forked) = host.fork(&episode).await?;
        latencies.push(started.elapsed());
        host.drop_episode(forked.id());
        if !snapshot.is_empty() {
            host.delete_snapshot(&snapshot);
        }
        snapshot = id;
    }
    let file = host
        .snapshot_by_id(&snapshot)
        .map(|s| s.to_file().len())
        .unwrap_or_default();
    latencies.sort();
    println!(
        "host_bench fork: slack after {calls} tool calls, {forks} forks by replay, one thread"
    );
    println!("| fork p50 | fork p99 | fork max | snapshot file |\n|---|---|---|---|");
    println!(
        "| {:.2} ms | {:.2} ms | {:.2} ms | {:.1} KiB |",
        micros(percentile(&latencies, 0.50)) / 1e3,
        micros(percentile(&latencies, 0.99)) / 1e3,
        micros(latencies.last().copied().unwrap_or_default()) / 1e3,
        file as f64 / 1024.0
    );
    Ok(())
}

/// Makes snapshot `id`'s image: how long it took and the RSS it added, in KiB.
async fn time_image(host: &Host, id: &str) -> anyhow::Result<(Duration, u64)> {
    let before = rss_kib();
    let started = Instant::now();
    anyhow::ensure!(host.prepare_image(id).await?, "slack has no image");
    Ok((started.elapsed(), rss_kib().saturating_sub(before)))
}

async fn restore(calls: usize, restores: usize) -> anyhow::Result<()> {
    let (host, episode) = slack_after(calls).await?;
    let id = host.snapshot(&episode).await?;
    let (first_took, first_kib) = time_image(&host, &id).await?;
    let mut latencies = Vec::with_capacity(restores);
    for _ in 0..restores {
        let started = Instant::now();
        let restored = host.restore(&id).await?;
        latencies.push(started.elapsed());
        anyhow::ensure!(
            restored.get_data().await? == episode.get_data().await?,
            "the restored episode's data differs"
        );
        host.drop_episode(restored.id());
        // The dropped episode's task ends, and its instance goes back to the pool, when it runs.
        tokio::task::yield_now().await;
    }
    episode
        .call_tool("slack_list_channels", Map::new(), Caller::default())
        .await;
    let another = host.snapshot(&episode).await?;
    let (another_took, another_kib) = time_image(&host, &another).await?;
    let metrics = host.metrics().encode();
    anyhow::ensure!(
        metrics.contains(&format!(
            "envhost_restores_total{{from=\"image\"}} {restores}\n"
        )),
        "every restore came from the image: {metrics}"
    );
    latencies.sort();
    println!(
        "host_bench restore: slack after {calls} tool calls, {restores} restores from the snapshot's image, one thread"
    );
    println!(
        "| restore p50 | restore p99 | restore max | first image made in | RSS it added | next image made in | RSS it added |\n|---|---|---|---|---|---|---|"
    );
    println!(
        "| {:.3} ms | {:.3} ms | {:.3} ms | {:.1} ms | {:.1} MiB | {:.1} ms | {:.1} MiB |",
        micros(percentile(&latencies, 0.50)) / 1e3,
        micros(percentile(&latencies, 0.99)) / 1e3,
        micros(latencies.last().copied().unwrap_or_default()) / 1e3,
        micros(first_took) / 1e3,
        first_kib as f64 / 1024.0,
        micros(another_took) / 1e3,
        another_kib as f64 / 1024.0
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
            Bench::Calls {
                seconds,
                episodes,
                slack,
                memory_mib,
            } => calls(seconds, episodes, slack, memory_mib).await,
            Bench::Fork { calls, forks } => fork(calls, forks).await,
            Bench::Restore { calls, restores } => restore(calls, restores).await,
        }
    })
}
