//! The checks: the refusals, and the server after the creates.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use envhost_tests::load::conn::{Conn, Target};
use envhost_tests::load::data_plane::{CHANNEL, fetch_card, seed};
use envhost_tests::load::episodes::{Created, Episode, create, delete};
use envhost_tests::load::mcp::{Session, ToolOutcome};
use serde_json::json;

use super::Args;
use super::creates::Tally;
use crate::server::{LIVE_EPISODES, metrics, sample};
use crate::table::count;

/// One check of the server's behaviour.
pub(super) struct Check {
    /// What is checked.
    pub(super) name: &'static str,
    /// Whether it held.
    pub(super) ok: bool,
    /// What was seen.
    pub(super) detail: String,
}

impl Check {
    /// A check from an outcome: held with its detail, or failed with the error.
    pub(super) fn of(name: &'static str, outcome: anyhow::Result<String>) -> Self {
        match outcome {
            Ok(detail) => Self {
                name,
                ok: true,
                detail,
            },
            Err(e) => Self {
                name,
                ok: false,
                detail: format!("{e:#}"),
            },
        }
    }
}

/// Every 503 is `too_many_episodes` with a `Retry-After`.
pub(super) fn refusals_check(tally: &Tally) -> Check {
    let name = "every 503 is too_many_episodes with Retry-After";
    if tally.malformed > 0 {
        return Check {
            name,
            ok: false,
            detail: format!("{} of {} are not", tally.malformed, tally.refused),
        };
    }
    Check {
        name,
        ok: true,
        detail: format!("{} checked", count(tally.refused)),
    }
}

/// No answer but 201 and 503, and none missing.
pub(super) fn other_answers_check(tally: &Tally) -> Check {
    let others: u64 = tally.other.values().sum();
    Check {
        name: "every create answered 201 or 503",
        ok: others == 0 && tally.transport == 0,
        detail: if others == 0 && tally.transport == 0 {
            "yes".into()
        } else {
            format!(
                "{others} other answers {:?}, {} without answer; {}",
                tally.other,
                tally.transport,
                tally.samples.join("; ")
            )
        },
    }
}

/// The server after the creates: its card, a tool call on a created episode, its metrics, and a
/// create after a delete (the new episode joins `tally.created`, the deleted one leaves it).
pub(super) async fn server_checks(
    target: &Target,
    tally: &mut Tally,
    args: &Args,
    timeout: Duration,
) -> Vec<Check> {
    let card = within("the card", timeout, async {
        let mut conn = Conn::open(target).await?;
        let card = fetch_card(&mut conn, target).await?;
        Ok(format!("the root card of {}", card.name))
    })
    .await;
    let episode = tally.created.first().cloned();
    let call = within("the tool call", timeout, async {
        let episode = episode.context("no episode was created")?;
        tool_call(target, &episode, timeout).await
    })
    .await;
    let metrics = within("GET /metrics", timeout, async {
        let mut conn = Conn::open(target).await?;
        let text = metrics(&mut conn, target).await?;
        let live = sample(&text, LIVE_EPISODES).context("no envhost_episodes_live sample")?;
        Ok(format!("{LIVE_EPISODES} {live}"))
    })
    .await;
    let room = within("delete one, create one", timeout, async {
        let victim = tally.created.pop().context("no episode was created")?;
        let mut conn = Conn::open(target).await?;
        let status = delete(&mut conn, target, &victim.id).await?;
        if status != 200 {
            tally.created.push(victim);
            bail!("DELETE /episodes/{{id}} answered {status}");
        }
        match create(&mut conn, target, Some(&args.environment)).await? {
            Created::Episode(episode) => {
                let detail = format!("deleted {}, created {}", victim.id, episode.id);
                tally.created.push(episode);
                Ok(detail)
            }
            Created::Refused(r) => bail!(
                "the create after a delete answered {}: {}",
                r.status,
                r.body
            ),
        }
    })
    .await;
    vec![
        Check::of("the card answers", card),
        Check::of("a tool call on a created episode answers", call),
        Check::of("GET /metrics answers", metrics),
        Check::of("after a delete, a create succeeds", room),
    ]
}

/// `check`'s outcome, or an error when it takes longer than `timeout`.
async fn within(
    what: &str,
    timeout: Duration,
    check: impl Future<Output = anyhow::Result<String>>,
) -> anyhow::Result<String> {
    tokio::time::timeout(timeout, check)
        .await
        .unwrap_or_else(|_| bail!("{what}: no answer within {timeout:?}"))
}

/// Seeds `episode` and calls its `<name>_send_message` over a new MCP session.
async fn tool_call(
    target: &Target,
    episode: &Episode,
    timeout: Duration,
) -> anyhow::Result<String> {
    let mut conn = Conn::open(target).await?;
    let card = fetch_card(&mut conn, &episode.target).await?;
    seed(&mut conn, &episode.target).await?;
    let uri = episode.target.uri(card.mcp_path())?;
    let mut session = Session::open(Arc::clone(&episode.target), uri, "admission".into()).await?;
    let tool = format!("{}_send_message", card.name);
    let arguments = json!({"channel": CHANNEL, "text": "admission check", "to": "sink"});
    let outcome = session.call(&tool, &arguments, timeout).await;
    session.close().await;
    match outcome? {
        ToolOutcome::Ok => Ok(format!("{tool} on episode {}", episode.id)),
        ToolOutcome::Failed(code) => bail!("{tool} answered isError ({code:?})"),
    }
}
