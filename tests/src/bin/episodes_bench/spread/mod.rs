//! `spread`: aggregate tool calls/s of many episodes, each with its own session, against one
//! episode loaded by a few clients, in the same run. The two loads take turns in short windows
//! (in ABBA order: single, spread, spread, single, …) so that both see the machine as it is at
//! that moment: on a shared virtual machine whose speed drifts by a quarter over seconds, two
//! loads run one after the other for ten seconds each measure the drift as much as the spread.

mod report;
mod turn;

use std::sync::Arc;

use anyhow::bail;
use envhost_tests::load::conn::{Conn, Target};
use envhost_tests::load::data_plane::{Card, fetch_card, reset, seed};
use envhost_tests::load::episodes::{Episode, create_many, delete_all};
use envhost_tests::load::mcp::Session;
use futures::{StreamExt as _, TryStreamExt as _};

use crate::{Common, Outcome};
use report::report;
use turn::{Group, Load, turn};

/// How many episodes are created (and seeded, and deleted) at once.
const CREATE_CONCURRENCY: usize = 8;
/// How many sessions are opened at once.
const OPEN_CONCURRENCY: usize = 64;

/// `episodes_bench spread`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Episodes of the spread load, created for the run, each with one client of its own.
    #[arg(long, default_value_t = 1_000)]
    episodes: usize,
    /// Clients of the single-episode load, all on the server's root episode.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Clients of the spread load, each calling its share of the episodes' sessions in turn;
    /// default: one per episode. With `--clients` here, the two loads keep as many calls in
    /// flight.
    #[arg(long)]
    spread_clients: Option<usize>,
    /// Each client of the spread load sends its sessions' calls over one connection (the
    /// sessions stay apart by their `Mcp-Session-Id`) rather than each session over its own.
    #[arg(long)]
    share_connections: bool,
    /// Turns of each load (alternating in ABBA order).
    #[arg(long, default_value_t = 10)]
    turns: usize,
    /// Measured seconds of each turn.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Seconds of calls at the start of each turn, not counted.
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// The environment of the created episodes; default: the server's default (the root
    /// episode's). It must be slack-like: `data/add` of channels, `<name>_send_message`.
    #[arg(long)]
    environment: Option<String>,
}

impl Args {
    /// The clients of the spread load.
    pub(super) fn spread_clients(&self) -> usize {
        self.spread_clients.unwrap_or(self.episodes)
    }

    /// Rejects values the bench cannot use.
    fn validate(&self) -> anyhow::Result<()> {
        if self.episodes == 0 || self.clients == 0 || self.turns == 0 {
            bail!("--episodes, --clients and --turns must be at least 1");
        }
        if !(1..=self.episodes).contains(&self.spread_clients()) {
            bail!("--spread-clients must be between 1 and --episodes");
        }
        for (name, value) in [("--seconds", self.seconds), ("--warmup", self.warmup)] {
            if !(0.0..=1e6).contains(&value) {
                bail!("{name} must be a number of seconds between 0 and 1e6");
            }
        }
        if self.seconds == 0.0 {
            bail!("--seconds must be more than 0");
        }
        Ok(())
    }
}

/// Runs the bench: seeds the root episode, creates and seeds the episodes, takes the turns,
/// then deletes the episodes and resets the root episode (also when the turns fail).
pub(crate) async fn run(args: &Args) -> anyhow::Result<Outcome> {
    args.validate()?;
    let root = Arc::new(Target::parse(&args.common.url)?);
    let mut control = Conn::open(&root).await?;
    seed(&mut control, &root).await?;
    let episodes = create_many(
        &root,
        args.episodes,
        args.environment.as_deref(),
        CREATE_CONCURRENCY,
        true,
    )
    .await?;
    let measured = turns(args, &root, &mut control, &episodes).await;
    let deleted = delete_all(&root, &episodes).await;
    let reset = reset(&mut control, &root).await;
    let (single, spread) = measured?;
    deleted?;
    reset?;
    Ok(report(args, single, spread))
}

/// Opens the sessions (the single load's on the root episode, the spread load's one per
/// episode), takes the turns, and closes the sessions. The root episode is seeded afresh before
/// each of its turns, so that it does not grow from turn to turn (every call adds a message and
/// a journal entry; the episodes of the spread load get a few hundred each over a run).
async fn turns(
    args: &Args,
    root: &Arc<Target>,
    control: &mut Conn,
    episodes: &[Episode],
) -> anyhow::Result<(Load, Load)> {
    let root_card = fetch_card(control, root).await?;
    let card = fetch_card(control, &episodes[0].target).await?;
    let targets = std::iter::repeat_n((root, &root_card), args.clients)
        .chain(episodes.iter().map(|e| (&e.target, &card)));
    let mut sessions: Vec<Session> = futures::stream::iter(targets.enumerate())
        .map(|(i, (target, card))| {
            let uri = target.uri(card.mcp_path());
            let target = Arc::clone(target);
            async move { Session::open(target, uri?, format!("bench-{i}")).await }
        })
        .buffered(OPEN_CONCURRENCY)
        .try_collect()
        .await?;
    let spread_sessions = sessions.split_off(args.clients);
    let tool = |card: &Card| format!("{}_send_message", card.name);
    let mut single = Group::new(sessions, args.clients, false, &tool(&root_card), 0);
    let mut spread = Group::new(
        spread_sessions,
        args.spread_clients(),
        args.share_connections,
        &tool(&card),
        args.clients,
    );
    let mut loads = (Load::default(), Load::default());
    for i in 0..args.turns {
        let order = if i % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for is_single in order {
            if is_single {
                seed(control, root).await?;
                loads.0.add(turn(args, &mut single).await?);
            } else {
                loads.1.add(turn(args, &mut spread).await?);
            }
        }
    }
    single.close().await;
    spread.close().await;
    Ok(loads)
}
