//! `isolation`: how much a spinning episode slows the calls of the others. Each client calls
//! `echo` on its own episode in a closed loop (or at `--rate` calls a second), first alone
//! (quiet), then while one more task calls `spin` on the spinner episode over and over (noisy).

mod phase;
mod report;

use std::sync::Arc;

use anyhow::bail;
use envhost_tests::load::conn::{Conn, Target};
use envhost_tests::load::data_plane::fetch_card;
use envhost_tests::load::episodes::{Episode, create_many, delete_all};
use envhost_tests::load::mcp::Session;

use crate::{Common, Outcome};
use phase::{Phase, phase};
use report::report;

/// How many episodes are created (and deleted) at once.
const CREATE_CONCURRENCY: usize = 8;

/// `episodes_bench isolation`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Measured seconds of each phase.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Seconds of calls before each phase's window, not counted.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Clients, each calling `echo` on its own episode.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Calls a second each client starts (an open loop); none: each calls again as soon as it
    /// is answered (a closed loop, which saturates the machine).
    #[arg(long)]
    pub(crate) rate: Option<f64>,
    /// The environment of the episodes (it must have the echo and spin tools).
    #[arg(long, default_value = "faulty")]
    environment: String,
    /// The tool the clients call, with `{"text": ...}`.
    #[arg(long, default_value = "echo")]
    echo_tool: String,
    /// The tool the spinner calls, with `{}`; it should run into the CPU deadline.
    #[arg(long, default_value = "spin")]
    spin_tool: String,
}

/// Runs the bench: creates the episodes, runs both phases, deletes the episodes.
pub(crate) async fn run(args: &Args) -> anyhow::Result<Outcome> {
    if args.clients == 0 {
        bail!("--clients must be at least 1");
    }
    for (name, value) in [("--seconds", args.seconds), ("--warmup", args.warmup)] {
        if !(0.0..=1e6).contains(&value) {
            bail!("{name} must be a number of seconds between 0 and 1e6");
        }
    }
    if args.seconds == 0.0 {
        bail!("--seconds must be more than 0");
    }
    let target = Target::parse(&args.common.url)?;
    let episodes = create_many(
        &target,
        args.clients + 1,
        Some(&args.environment),
        CREATE_CONCURRENCY,
        false,
    )
    .await?;
    let measured = phases(args, &target, &episodes).await;
    let deleted = delete_all(&target, &episodes).await;
    let (quiet, noisy) = measured?;
    deleted?;
    Ok(report(args, &quiet, &noisy))
}

/// Opens the sessions (the spinner's on `episodes[0]`, client `i`'s on `episodes[i + 1]`) and
/// runs the quiet phase, then the noisy one.
async fn phases(
    args: &Args,
    target: &Target,
    episodes: &[Episode],
) -> anyhow::Result<(Phase, Phase)> {
    let mut control = Conn::open(target).await?;
    let card = fetch_card(&mut control, &episodes[0].target).await?;
    drop(control);
    let open = |episode: &Episode, role: String| {
        let target = Arc::clone(&episode.target);
        let uri = target.uri(card.mcp_path());
        async move { Session::open(target, uri?, role).await }
    };
    let mut spinner = open(&episodes[0], "spinner".into()).await?;
    let clients = futures::future::try_join_all(
        episodes[1..]
            .iter()
            .enumerate()
            .map(|(i, e)| open(e, format!("client-{i}"))),
    )
    .await?;
    let (clients, quiet) = phase(args, clients, None).await?;
    let (mut clients, noisy) = phase(args, clients, Some(&mut spinner)).await?;
    for session in &mut clients {
        session.close().await;
    }
    spinner.close().await;
    Ok((quiet, noisy))
}
