//! The report: everything a run measured, as a table and as one JSON line.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use envhost_tests::load::procfs::Memory;
use envhost_tests::load::stats::Summary;

/// What the server used over the run.
#[derive(Debug)]
pub(crate) struct ServerUsage {
    /// Its process id.
    pub(crate) pid: u32,
    /// CPU seconds over the measured window.
    pub(crate) cpu: Option<f64>,
    /// Memory before seeding.
    pub(crate) before: Option<Memory>,
    /// Memory after the run.
    pub(crate) after: Option<Memory>,
}

/// Everything a run measured.
pub(crate) struct Report {
    /// The MCP endpoint loaded.
    pub(crate) url: String,
    /// The tool called.
    pub(crate) tool: String,
    /// Concurrent clients.
    pub(crate) clients: usize,
    /// Episodes the clients were spread over (1: the URL's own).
    pub(crate) episodes: usize,
    /// The environment of the episodes created for the run; `None` when the URL's own episode
    /// was loaded.
    pub(crate) environment: Option<String>,
    /// Runtime threads of the client.
    pub(crate) threads: usize,
    /// Warmup seconds.
    pub(crate) warmup: f64,
    /// The measured window, as it turned out.
    pub(crate) elapsed: Duration,
    /// Counts and latencies.
    pub(crate) summary: Summary,
    /// This process' CPU seconds over the window.
    pub(crate) client_cpu: f64,
    /// The server's usage, with `--server-pid`.
    pub(crate) server: Option<ServerUsage>,
    /// What went wrong, per client.
    pub(crate) failures: Vec<String>,
    /// Why the environment could not be reset (or the episodes deleted) after the run.
    pub(crate) cleanup: Option<String>,
}

/// A number of milliseconds for the table, `-` when missing.
fn cell(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// A number rounded to `places` decimals for the JSON line.
fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

impl Report {
    /// The human-readable report.
    pub(crate) fn table(&self) -> String {
        let s = &self.summary;
        let secs = self.elapsed.as_secs_f64();
        let runtime = if self.threads == 1 {
            "current_thread".into()
        } else {
            format!("{} threads", self.threads)
        };
        let episodes = match &self.environment {
            None => "the URL's own episode".into(),
            Some(env) => format!("{} created episodes of {env}", self.episodes),
        };
        let mut out = format!(
            "mcp_load {}  tool {}  {episodes}  runtime {runtime}  warmup {}s\n",
            self.url, self.tool, self.warmup
        );
        let server_cpu = self.server.as_ref().and_then(|u| u.cpu);
        let _ = writeln!(
            out,
            "{:>7} {:>8} {:>9} {:>7} {:>10} {:>8} {:>8} {:>8} {:>9} {:>9} {:>13} {:>13}",
            "clients",
            "episodes",
            "calls",
            "errors",
            "calls/s",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms",
            "elapsed s",
            "client cpu s",
            "server cpu s"
        );
        let _ = writeln!(
            out,
            "{:>7} {:>8} {:>9} {:>7} {:>10.1} {:>8} {:>8} {:>8} {:>9} {:>9.2} {:>13} {:>13}",
            self.clients,
            self.episodes,
            s.calls,
            s.errors,
            s.per_s,
            cell(s.p50),
            cell(s.p90),
            cell(s.p99),
            cell(s.max),
            secs,
            format!(
                "{:.2} ({:.0}%)",
                self.client_cpu,
                100.0 * self.client_cpu / secs
            ),
            server_cpu.map_or_else(
                || "-".into(),
                |c| format!("{c:.2} ({:.0}%)", 100.0 * c / secs)
            ),
        );
        if let Some(server) = &self.server {
            let memory = |m: Option<Memory>| {
                m.map_or_else(
                    || "?".into(),
                    |m| format!("VmRSS {} KiB, VmHWM {} KiB", m.rss, m.hwm),
                )
            };
            let _ = writeln!(
                out,
                "server pid {}: before {}; after {}",
                server.pid,
                memory(server.before),
                memory(server.after)
            );
        }
        for failure in &self.failures {
            let _ = writeln!(out, "{failure}");
        }
        out
    }

    /// The report as one JSON object.
    pub(crate) fn json(&self) -> Value {
        let s = &self.summary;
        let ms = |v: Option<f64>| v.map(|v| round(v, 3));
        let memory = |m: Option<Memory>| m.map(|m| json!({"VmRSS": m.rss, "VmHWM": m.hwm}));
        json!({
            "url": self.url, "tool": self.tool, "clients": self.clients, "threads": self.threads,
            "episodes": self.episodes, "episodes_created": self.environment.is_some(), "environment": self.environment,
            "warmup_s": self.warmup, "elapsed_s": round(self.elapsed.as_secs_f64(), 3),
            "calls": s.calls, "errors": s.errors, "per_s": round(s.per_s, 1),
            "p50_ms": ms(s.p50), "p90_ms": ms(s.p90), "p99_ms": ms(s.p99), "mean_ms": ms(s.mean), "max_ms": ms(s.max),
            "client_cpu_s": round(self.client_cpu, 3),
            "server": self.server.as_ref().map(|u| json!({
                "pid": u.pid, "cpu_s": u.cpu.map(|c| round(c, 3)),
                "rss_kib": {"before": memory(u.before), "after": memory(u.after)},
            })),
            "failures": self.failures, "cleanup_error": self.cleanup,
        })
    }
}
