//! The report: the answers, the checks and the server's state, as Markdown and JSON.

use std::time::Duration;

use envhost_tests::load::stats::Summary;
use serde_json::{Value, json};

use super::checks::Check;
use super::creates::Tally;
use super::{Args, MemoryReadings};
use crate::Outcome;
use crate::server::LIVE_EPISODES;
use crate::table::{Table, count, ms, rate, round};

/// Everything the bench saw, to report.
pub(super) struct Report<'a> {
    /// The bench's arguments.
    pub(super) args: &'a Args,
    /// What the creates got.
    pub(super) tally: &'a mut Tally,
    /// How long the creates took.
    pub(super) elapsed: Duration,
    /// The checks, in order.
    pub(super) checks: &'a [Check],
    /// Episodes deleted at the end.
    pub(super) deleted: usize,
    /// How long the deletes took.
    pub(super) delete_elapsed: Duration,
    /// Episodes `GET /episodes` listed before the bench and after its clean-up.
    pub(super) listed: (usize, Option<usize>),
    /// `envhost_episodes_live` before, after the creates, after the clean-up.
    pub(super) live: [Option<f64>; 3],
    /// The server's memory.
    pub(super) memory: &'a MemoryReadings,
}

impl Report<'_> {
    /// The report as Markdown and JSON, and whether every check held.
    pub(super) fn outcome(self) -> Outcome {
        let secs = self.elapsed.as_secs_f64();
        let created = Summary::of(
            std::slice::from_mut(&mut self.tally.created_latency),
            self.elapsed,
        );
        let refused = Summary::of(
            std::slice::from_mut(&mut self.tally.refused_latency),
            self.elapsed,
        );
        let others: u64 = self.tally.other.values().sum();
        let t = &self.tally;

        let mut out = format!(
            "### episodes_bench admission: {} creates of {}, {} at a time, against {}\n\n",
            count(self.args.creates as u64),
            self.args.environment,
            self.args.concurrency,
            self.args.common.url
        );
        let mut answers = Table::new(&["answers", "count", "per s", "p50 ms", "p99 ms", "max ms"]);
        answers.row(vec![
            "201 created".into(),
            count(created.calls as u64),
            rate(created.per_s),
            ms(created.p50),
            ms(created.p99),
            ms(created.max),
        ]);
        answers.row(vec![
            "503 too_many_episodes".into(),
            count(t.refused),
            rate(refused.per_s),
            ms(refused.p50),
            ms(refused.p99),
            ms(refused.max),
        ]);
        answers.row(vec![
            "other status".into(),
            count(others),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
        ]);
        answers.row(vec![
            "no answer".into(),
            count(t.transport),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
        ]);
        answers.row(vec![
            "all".into(),
            count(self.args.creates as u64),
            rate(self.args.creates as f64 / secs),
            "".into(),
            "".into(),
            "".into(),
        ]);
        out.push_str(&answers.render());
        out.push_str(&format!(
            "\nThe creates took {secs:.2} s; per s is of that time, latency of each request.\n\n"
        ));

        let mut checks = Table::text(&["check", "result", "detail"]);
        for c in self.checks {
            checks.row(vec![
                c.name.into(),
                if c.ok { "ok" } else { "FAILED" }.into(),
                c.detail.replace('|', "\\|"),
            ]);
        }
        out.push_str(&checks.render());
        out.push('\n');

        let live = |v: Option<f64>| v.map_or_else(|| "?".into(), |v| rate(v).replace(".0", ""));
        let kib = |v: Option<u64>| v.map_or_else(|| "-".into(), count);
        let mut server =
            Table::new(&["server", "before", "after the creates", "after the deletes"]);
        server.row(vec![
            "GET /episodes lists".into(),
            count(self.listed.0 as u64),
            count(self.listed.0 as u64 + created.calls as u64),
            self.listed
                .1
                .map_or_else(|| "?".into(), |n| count(n as u64)),
        ]);
        server.row(vec![
            LIVE_EPISODES.into(),
            live(self.live[0]),
            live(self.live[1]),
            live(self.live[2]),
        ]);
        if self.args.common.server_pid.is_some() {
            server.row(vec![
                "VmRSS KiB".into(),
                kib(self.memory.before),
                kib(self.memory.after_creates),
                kib(self.memory.after_deletes),
            ]);
        }
        out.push_str(&server.render());
        if self.args.common.server_pid.is_some() {
            out.push_str(&format!(
                "\nserver VmHWM {} KiB; deletes: {} in {:.2} s",
                kib(self.memory.peak),
                count(self.deleted as u64),
                self.delete_elapsed.as_secs_f64()
            ));
        } else {
            out.push_str(&format!(
                "\ndeletes: {} in {:.2} s",
                count(self.deleted as u64),
                self.delete_elapsed.as_secs_f64()
            ));
        }
        if self.args.settle > 0.0 {
            out.push_str(&format!(
                " (last reading {} s after them)",
                self.args.settle
            ));
        }
        out.push('\n');

        let ms3 = |v: Option<f64>| v.map(|v| round(v, 3));
        let json = json!({
            "bench": "admission", "url": self.args.common.url, "environment": self.args.environment,
            "creates": self.args.creates, "concurrency": self.args.concurrency,
            "elapsed_s": round(secs, 3), "creates_per_s": round(self.args.creates as f64 / secs, 1),
            "created": created.calls, "created_p50_ms": ms3(created.p50), "created_p99_ms": ms3(created.p99),
            "created_max_ms": ms3(created.max),
            "refused_503": t.refused, "refused_p50_ms": ms3(refused.p50), "refused_p99_ms": ms3(refused.p99),
            "refused_malformed": t.malformed,
            "other": t.other.iter().map(|(s, n)| (s.to_string(), Value::from(*n))).collect::<serde_json::Map<_, _>>(),
            "no_answer": t.transport, "samples": t.samples,
            "checks": self.checks.iter().map(|c| json!({"check": c.name, "ok": c.ok, "detail": c.detail})).collect::<Vec<_>>(),
            "deleted": self.deleted, "delete_elapsed_s": round(self.delete_elapsed.as_secs_f64(), 3),
            "episodes_listed": {"before": self.listed.0, "after": self.listed.1},
            "episodes_live": {"before": self.live[0], "after_creates": self.live[1], "after_deletes": self.live[2]},
            "server": self.args.common.server_pid.map(|pid| json!({"pid": pid, "rss_kib": {
                "before": self.memory.before, "after_creates": self.memory.after_creates,
                "after_deletes": self.memory.after_deletes}, "hwm_kib": self.memory.peak})),
        });
        Outcome {
            table: out,
            json,
            ok: self.checks.iter().all(|c| c.ok),
        }
    }
}
