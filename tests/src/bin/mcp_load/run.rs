//! The run: seeding the environment (or creating and seeding episodes), the clients' closed loops
//! over the warmup and the measured window, and the clean-up after them.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use envhost_tests::load::closed_loop::{Client, Window, run_clients};
use envhost_tests::load::conn::{Conn, Target};
use envhost_tests::load::data_plane::{Card, fetch_card, reset, seed};
use envhost_tests::load::episodes::{Episode, create_many, delete_all};
use envhost_tests::load::mcp::Session;
use envhost_tests::load::procfs::{CpuTimes, Memory, proc_memory};
use envhost_tests::load::stats::{ClientStats, Summary};
use futures::{StreamExt as _, TryFutureExt as _, TryStreamExt as _};
use http::Uri;

use crate::Args;
use crate::report::{Report, ServerUsage};

/// How many episodes `--episodes` creates (and seeds), and deletes, at once.
const CREATE_CONCURRENCY: usize = 8;
/// How many sessions are opened at once.
const OPEN_CONCURRENCY: usize = 64;

/// The episodes the clients load.
enum Episodes {
    /// The URL's own episode: seeded before the run, reset after it.
    Root(Arc<Target>),
    /// Episodes created for the run: deleted after it.
    Created(Vec<Episode>),
}

impl Episodes {
    /// Where each episode's routes are.
    fn targets(&self) -> Vec<Arc<Target>> {
        match self {
            Self::Root(target) => vec![target.clone()],
            Self::Created(episodes) => episodes.iter().map(|e| e.target.clone()).collect(),
        }
    }
}

/// The whole bench: seed (or create episodes), load, clean up (the environment is reset, or the
/// episodes deleted, even when the load fails).
pub(crate) async fn run(args: &Args) -> anyhow::Result<Report> {
    let target = Arc::new(Target::parse(&args.url)?);
    let mut control = Conn::open(&target).await?;
    let card = fetch_card(&mut control, &target).await?;

    let memory_before = args.server_pid.and_then(proc_memory);
    let episodes = match args.episodes {
        None => {
            if !args.no_seed {
                seed(&mut control, &target).await?;
            }
            Episodes::Root(target.clone())
        }
        Some(n) => Episodes::Created(
            create_many(
                &target,
                n,
                args.environment.as_deref(),
                CREATE_CONCURRENCY,
                !args.no_seed,
            )
            .await?,
        ),
    };
    let loaded = load_episodes(args, &target, &episodes, control, card, memory_before).await;
    let cleanup = cleanup(&target, &episodes)
        .await
        .err()
        .map(|e| format!("{e:#}"));
    let mut report = loaded?;
    report.cleanup = cleanup;
    Ok(report)
}

/// Loads `episodes` (their card read over `control` when they were created) and reports.
async fn load_episodes(
    args: &Args,
    target: &Target,
    episodes: &Episodes,
    mut control: Conn,
    root_card: Card,
    memory_before: Option<Memory>,
) -> anyhow::Result<Report> {
    let (card, environment, url_base) = match episodes {
        Episodes::Root(_) => (root_card, None, target.clone()),
        Episodes::Created(created) => {
            let first = &created[0];
            let card = fetch_card(&mut control, &first.target)
                .await
                .context("the card of a created episode")?;
            (
                card,
                Some(first.environment.clone()),
                target.nested("/episodes/*/"),
            )
        }
    };
    drop(control);
    let env_name = args.env_name.clone().unwrap_or_else(|| card.name.clone());
    let tool = args
        .tool
        .clone()
        .unwrap_or_else(|| format!("{env_name}_send_message"));
    let endpoints = episodes
        .targets()
        .into_iter()
        .map(|t| {
            let uri: Uri = t.uri(card.mcp_path()).context("the card's MCP path")?;
            Ok((t, uri))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut measured = measure(args, &endpoints, &tool).await?;

    Ok(Report {
        url: url_base.url(card.mcp_path()),
        tool,
        clients: args.clients,
        episodes: endpoints.len(),
        environment,
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
        cleanup: None,
    })
}

/// Resets the root episode over a new connection, or deletes the episodes created for the run.
async fn cleanup(target: &Target, episodes: &Episodes) -> anyhow::Result<()> {
    match episodes {
        Episodes::Root(_) => {
            let mut conn = Conn::open(target).await?;
            reset(&mut conn, target).await
        }
        Episodes::Created(created) => delete_all(target, created).await,
    }
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

/// Opens a session per client (client `i` on `endpoints[i % endpoints.len()]`: a server and its
/// MCP path), runs their loops through the warmup and the window, and closes the sessions.
async fn measure(
    args: &Args,
    endpoints: &[(Arc<Target>, Uri)],
    tool: &str,
) -> anyhow::Result<Measured> {
    let clients: Vec<Client> = futures::stream::iter(0..args.clients)
        .map(|i| {
            let (target, uri) = &endpoints[i % endpoints.len()];
            Session::open(target.clone(), uri.clone(), format!("bench-{i}")).map_ok(Client::single)
        })
        .buffered(OPEN_CONCURRENCY)
        .try_collect()
        .await?;
    let window = Window::after(
        args.warmup,
        args.seconds,
        Duration::from_secs_f64(args.timeout),
    );
    let finished = run_clients(
        clients,
        tool,
        0,
        args.arguments.as_ref(),
        window,
        args.server_pid,
    )
    .await?;
    let memory_after = args.server_pid.and_then(proc_memory);

    let mut clients = Vec::with_capacity(finished.clients.len());
    for (mut client, stats) in finished.clients {
        client.close().await;
        clients.push(stats);
    }
    Ok(Measured {
        clients,
        elapsed: finished.elapsed,
        cpu_start: finished.cpu_start,
        cpu_end: finished.cpu_end,
        memory_after,
    })
}
