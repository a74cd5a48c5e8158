//! The creates: `--concurrency` workers, each over its own connection, and what they got.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use envhost_tests::load::conn::{Conn, Target};
use envhost_tests::load::episodes::{Created, Episode, create};
use envhost_tests::load::stats::ClientStats;

use super::Args;

/// What the creates got.
#[derive(Default)]
pub(super) struct Tally {
    /// The episodes created (201).
    pub(super) created: Vec<Episode>,
    /// The latency of each 201.
    pub(super) created_latency: ClientStats,
    /// The latency of each 503.
    pub(super) refused_latency: ClientStats,
    /// 503 answers.
    pub(super) refused: u64,
    /// 503 answers without code `too_many_episodes` or without a `Retry-After`.
    pub(super) malformed: u64,
    /// Any other status, by status.
    pub(super) other: BTreeMap<u16, u64>,
    /// Requests that got no answer (a connection error or the timeout).
    pub(super) transport: u64,
    /// The first of each kind of surprise, to show.
    pub(super) samples: Vec<String>,
}

impl Tally {
    /// Keeps a surprise to show (the first five).
    fn note(&mut self, what: String) {
        if self.samples.len() < 5 {
            self.samples.push(what);
        }
    }

    /// Adds another worker's tally.
    fn merge(&mut self, other: Self) {
        self.created.extend(other.created);
        self.created_latency.merge(other.created_latency);
        self.refused_latency.merge(other.refused_latency);
        self.refused += other.refused;
        self.malformed += other.malformed;
        for (status, n) in other.other {
            *self.other.entry(status).or_default() += n;
        }
        self.transport += other.transport;
        for sample in other.samples {
            self.note(sample);
        }
    }
}

/// Sends the creates, `--concurrency` at a time, each worker over its own connection (opened
/// before the clock starts).
pub(super) async fn create_all(
    target: &Target,
    args: &Args,
    timeout: Duration,
) -> anyhow::Result<Tally> {
    let workers = args.concurrency.min(args.creates);
    let conns = futures::future::try_join_all((0..workers).map(|_| Conn::open(target))).await?;
    let next = AtomicUsize::new(0);
    let tallies = futures::future::join_all(conns.into_iter().map(|conn| {
        creator(
            target,
            &args.environment,
            conn,
            &next,
            args.creates,
            timeout,
        )
    }))
    .await;
    let mut tally = Tally::default();
    for t in tallies {
        tally.merge(t);
    }
    Ok(tally)
}

/// One worker: takes creates off `next` until `n` are sent.
async fn creator(
    target: &Target,
    environment: &str,
    conn: Conn,
    next: &AtomicUsize,
    n: usize,
    timeout: Duration,
) -> Tally {
    let mut tally = Tally::default();
    let mut conn = Some(conn);
    while next.fetch_add(1, Ordering::Relaxed) < n {
        let started = Instant::now();
        let answer = tokio::time::timeout(timeout, async {
            let open = match conn.take() {
                Some(c) if !c.is_closed() => c,
                _ => Conn::open(target).await?,
            };
            create(conn.insert(open), target, Some(environment)).await
        })
        .await;
        let latency = started.elapsed();
        match answer {
            Err(_) => {
                conn = None;
                tally.transport += 1;
                tally.note(format!("POST /episodes: no answer within {timeout:?}"));
            }
            Ok(Err(e)) => {
                conn = None;
                tally.transport += 1;
                tally.note(format!("{e:#}"));
            }
            Ok(Ok(Created::Episode(episode))) => {
                tally.created_latency.record(Ok(()), latency);
                tally.created.push(episode);
            }
            Ok(Ok(Created::Refused(r))) if r.status == 503 => {
                tally.refused += 1;
                tally.refused_latency.record(Ok(()), latency);
                if r.code.as_deref() != Some("too_many_episodes") || r.retry_after.is_none() {
                    tally.malformed += 1;
                    tally.note(format!(
                        "503 with code {:?}, Retry-After {:?}: {}",
                        r.code, r.retry_after, r.body
                    ));
                }
            }
            Ok(Ok(Created::Refused(r))) => {
                *tally.other.entry(r.status).or_default() += 1;
                tally.note(format!("HTTP {}: {}", r.status, r.body));
            }
        }
    }
    tally
}
