//! `seeding`: episodes created already seeded, through `POST /episodes`: each with a distinct
//! seed given as parts, then each restored from one seeded snapshot. Times both, checks every
//! answer and a sample of the episodes' data, and deletes what it created.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use envhost_tests::load::conn::{Conn, Target, require_success};
use envhost_tests::load::episodes::delete_many;
use envhost_tests::load::procfs::CpuTimes;

use crate::table::Table;
use crate::{Common, Outcome};

/// `episodes_bench seeding`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Episodes to create each way (the server's `--max-episodes` must allow them).
    #[arg(long, default_value_t = 10_000)]
    episodes: usize,
    /// Messages in each seed (over 20 channels, about 100 bytes each).
    #[arg(long, default_value_t = 200)]
    messages: usize,
    /// Requests in flight at once, each worker over its own connection.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// The environment (slack's seed shape).
    #[arg(long, default_value = "slack")]
    environment: String,
}

/// The answer of a `POST /episodes` that created one.
#[derive(Deserialize)]
struct Created {
    id: String,
}

/// A `POST /episodes` body of `environment` with a seed of `messages` messages: the text
/// around the places where each episode's number goes, so that every seed is distinct and a
/// body costs the client one concatenation.
fn body_pieces(environment: &str, messages: usize) -> Vec<String> {
    const MARK: &str = "\u{1}";
    let channels: Vec<Value> = (0..20)
        .map(|c| json!({"name": format!("c{c:02}"), "topic": format!("topic {c}")}))
        .collect();
    let messages: Vec<Value> = (0..messages)
        .map(|i| {
            json!({"channel": format!("c{:02}", i % 20),
                   "text": format!("episode {MARK} message {i:04}: the quick brown fox"),
                   "from": "writer", "to": "reader"})
        })
        .collect();
    let body = json!({"environment": environment, "parts": [{"kind": "data", "data":
        {"channels": channels, "messages": messages}}]});
    body.to_string().split(MARK).map(str::to_owned).collect()
}

/// Sends `count` creates, `concurrency` at a time, with the body `body(i)` for the i-th;
/// answers the ids created, in no order.
async fn create_all(
    target: &Target,
    count: usize,
    concurrency: usize,
    timeout: Duration,
    body: &(dyn Fn(usize) -> Bytes + Sync),
) -> anyhow::Result<Vec<String>> {
    let next = AtomicUsize::new(0);
    let worker = || async {
        let mut conn = Conn::open(target).await?;
        let mut ids = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                return anyhow::Ok(ids);
            }
            let send = conn.exchange(target, Method::POST, "/episodes", body(i));
            let response = tokio::time::timeout(timeout, send)
                .await
                .context("POST /episodes timed out")??;
            if response.status() != 201 {
                bail!(
                    "POST /episodes: HTTP {}: {}",
                    response.status(),
                    String::from_utf8_lossy(&response.body()[..response.body().len().min(300)])
                );
            }
            ids.push(serde_json::from_slice::<Created>(response.body())?.id);
        }
    };
    let results =
        futures::future::join_all((0..concurrency.clamp(1, count.max(1))).map(|_| worker())).await;
    let mut ids = Vec::with_capacity(count);
    let mut error = None;
    for result in results {
        match result {
            Ok(created) => ids.extend(created),
            Err(e) => {
                error.get_or_insert(e);
            }
        }
    }
    match error {
        None => Ok(ids),
        Some(e) => {
            delete_many(target, &ids, concurrency).await;
            Err(e)
        }
    }
}

/// The number of messages episode `id` holds, from `data/get`.
async fn messages_of(conn: &mut Conn, target: &Target, id: &str) -> anyhow::Result<usize> {
    let body = br#"{"jsonrpc": "2.0", "id": 1, "method": "data/get"}"#;
    let response = conn
        .exchange(
            target,
            Method::POST,
            &format!("/episodes/{id}/agentenv"),
            Bytes::from_static(body),
        )
        .await?;
    require_success(&response)?;
    let answer: Value = serde_json::from_slice(response.body())?;
    answer["result"]["parts"][0]["data"]["messages"]
        .as_array()
        .map(Vec::len)
        .with_context(|| format!("episode {id} answered data/get with {answer}"))
}

/// One way of seeding, measured.
struct Phase {
    name: &'static str,
    seconds: f64,
    server_cpu: Option<f64>,
}

async fn measure(
    args: &Args,
    target: &Target,
    name: &'static str,
    body: &(dyn Fn(usize) -> Bytes + Sync),
) -> anyhow::Result<(Phase, Vec<String>)> {
    let timeout = Duration::from_secs_f64(args.common.timeout);
    let before = CpuTimes::now(args.common.server_pid);
    let started = Instant::now();
    let ids = create_all(target, args.episodes, args.concurrency, timeout, body).await?;
    let seconds = started.elapsed().as_secs_f64();
    let after = CpuTimes::now(args.common.server_pid);
    let server_cpu = after.server.zip(before.server).map(|(a, b)| a - b);
    Ok((
        Phase {
            name,
            seconds,
            server_cpu,
        },
        ids,
    ))
}

/// `episodes_bench seeding`.
pub(crate) async fn run(args: &Args) -> anyhow::Result<Outcome> {
    let target = Target::parse(&args.common.url)?;
    let mut conn = Conn::open(&target).await?;
    let pieces = body_pieces(&args.environment, args.messages);
    let with_parts = |i: usize| Bytes::from(pieces.join(&format!("{i:06}")));
    let (parts_phase, ids) = measure(args, &target, "parts", &with_parts).await?;
    let mut ok = true;
    for id in ids.iter().step_by((ids.len() / 10).max(1)) {
        ok &= messages_of(&mut conn, &target, id).await? == args.messages;
    }
    let seed_id = ids.first().cloned().context("no episode was created")?;
    let response = conn
        .exchange(
            &target,
            Method::POST,
            &format!("/episodes/{seed_id}/snapshot"),
            Bytes::new(),
        )
        .await?;
    require_success(&response)?;
    let snapshot = serde_json::from_slice::<Value>(response.body())?["snapshot"]
        .as_str()
        .context("the snapshot's id")?
        .to_owned();
    delete_many(&target, &ids, args.concurrency).await;
    // The first restore starts making the snapshot's image; the next ones instantiate it.
    let warm = Bytes::from(json!({"snapshot": snapshot}).to_string());
    let first = create_all(
        &target,
        1,
        1,
        Duration::from_secs_f64(args.common.timeout),
        &|_| warm.clone(),
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (snapshot_phase, restored) = measure(args, &target, "snapshot", &|_| warm.clone()).await?;
    for id in restored.iter().step_by((restored.len() / 10).max(1)) {
        ok &= messages_of(&mut conn, &target, id).await? == args.messages;
    }
    delete_many(&target, &restored, args.concurrency).await;
    delete_many(&target, &first, 1).await;

    let mut table = Table::new(&[
        "seeded from",
        "episodes",
        "seconds",
        "episodes/s",
        "server CPU s",
    ]);
    let mut phases = Vec::new();
    for phase in [&parts_phase, &snapshot_phase] {
        table.row(vec![
            phase.name.to_owned(),
            args.episodes.to_string(),
            format!("{:.2}", phase.seconds),
            format!("{:.0}", args.episodes as f64 / phase.seconds),
            phase.server_cpu.map_or("–".into(), |c| format!("{c:.2}")),
        ]);
        phases.push(
            json!({"from": phase.name, "seconds": phase.seconds, "server_cpu": phase.server_cpu}),
        );
    }
    let table = format!(
        "{} episodes, each with {} messages, {} at a time; the sampled episodes' data checked: {}\n\n{}",
        args.episodes,
        args.messages,
        args.concurrency,
        if ok { "yes" } else { "NO" },
        table.render()
    );
    Ok(Outcome {
        table,
        json: json!({"bench": "seeding", "episodes": args.episodes, "messages": args.messages, "phases": phases, "ok": ok}),
        ok,
    })
}
