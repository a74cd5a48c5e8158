//! `admission`: more creates than the server has room for. Counts the answers, times the
//! creates, checks the refusals and the server afterwards, and deletes what it created.

mod checks;
mod creates;
mod report;

use std::time::{Duration, Instant};

use anyhow::bail;
use envhost_tests::load::conn::{Conn, Target};
use envhost_tests::load::episodes::{delete_many, list};
use envhost_tests::load::procfs::proc_memory;

use crate::server::{live_episodes, rss};
use crate::table::count;
use crate::{Common, Outcome};
use checks::{Check, other_answers_check, refusals_check, server_checks};
use creates::create_all;
use report::Report;

/// `episodes_bench admission`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) common: Common,
    /// `POST /episodes` requests to send.
    #[arg(long, default_value_t = 20_000)]
    creates: usize,
    /// Requests in flight at once (each worker over its own connection); the deletes at the end
    /// go as many at a time.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// The environment of the episodes (it must have a `<name>_send_message` tool taking
    /// `channel`, `text` and `to`, as slack's).
    #[arg(long, default_value = "slack")]
    environment: String,
    /// Seconds to wait after the deletes before the last memory reading (envhost hands free
    /// memory back every 10 s).
    #[arg(long, default_value_t = 0.0)]
    settle: f64,
}

/// Memory readings of the server, in KiB.
#[derive(Default)]
struct MemoryReadings {
    /// VmRSS before the creates.
    before: Option<u64>,
    /// VmRSS right after them.
    after_creates: Option<u64>,
    /// VmRSS after the deletes (and `--settle`).
    after_deletes: Option<u64>,
    /// VmHWM at the end.
    peak: Option<u64>,
}

/// Runs the bench.
pub(crate) async fn run(args: &Args) -> anyhow::Result<Outcome> {
    if args.creates == 0 || args.concurrency == 0 {
        bail!("--creates and --concurrency must be at least 1");
    }
    if !(0.0..=3600.0).contains(&args.settle) {
        bail!("--settle must be between 0 and 3600 seconds");
    }
    let target = Target::parse(&args.common.url)?;
    let timeout = Duration::from_secs_f64(args.common.timeout);
    let pid = args.common.server_pid;
    let mut control = Conn::open(&target).await?;
    let listed_before = list(&mut control, &target).await?.len();
    let live_before = live_episodes(&target).await;
    let mut memory = MemoryReadings {
        before: rss(pid),
        ..MemoryReadings::default()
    };

    let started = Instant::now();
    let mut tally = create_all(&target, args, timeout).await?;
    let elapsed = started.elapsed();
    memory.after_creates = rss(pid);
    let live_after_creates = live_episodes(&target).await;

    let mut checks = vec![refusals_check(&tally), other_answers_check(&tally)];
    checks.extend(server_checks(&target, &mut tally, args, timeout).await);

    let ids: Vec<String> = tally.created.iter().map(|e| e.id.clone()).collect();
    let delete_started = Instant::now();
    let deleted = delete_many(&target, &ids, args.concurrency).await;
    let delete_elapsed = delete_started.elapsed();
    let listed_after = list(&mut control, &target).await;
    let live_after = live_episodes(&target).await;
    checks.push(Check::of(
        "every created episode deleted, none left over",
        match &listed_after {
            _ if deleted.failed > 0 => Err(anyhow::anyhow!(
                "{} of {} not deleted: {}",
                deleted.failed,
                ids.len(),
                deleted.failures.join("; ")
            )),
            Ok(after) if after.len() != listed_before => Err(anyhow::anyhow!(
                "GET /episodes lists {} episodes, {listed_before} before the bench",
                after.len()
            )),
            Ok(after) => Ok(format!(
                "{} deleted; GET /episodes lists {} as before",
                count(deleted.deleted as u64),
                after.len()
            )),
            Err(e) => Err(anyhow::anyhow!("{e:#}")),
        },
    ));
    if args.settle > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(args.settle)).await;
    }
    memory.after_deletes = rss(pid);
    memory.peak = pid.and_then(proc_memory).map(|m| m.hwm);

    let report = Report {
        args,
        tally: &mut tally,
        elapsed,
        checks: &checks,
        deleted: deleted.deleted,
        delete_elapsed,
        listed: (listed_before, listed_after.ok().map(|l| l.len())),
        live: [live_before, live_after_creates, live_after],
        memory: &memory,
    };
    Ok(report.outcome())
}
