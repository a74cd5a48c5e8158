//! The report of both phases, as Markdown and JSON.

use serde_json::json;

use super::Args;
use super::phase::{DEADLINE_EXCEEDED, Phase};
use crate::Outcome;
use crate::table::{Table, count, ms, rate, round};

/// The most p99 noisy / p99 quiet the project aims for.
const TARGET_RATIO: f64 = 2.0;

/// The report of both phases.
pub(super) fn report(args: &Args, quiet: &Phase, noisy: &Phase) -> Outcome {
    let mut out = format!(
        "### episodes_bench isolation: {} clients calling {} on their own {} episode, {} s \
         (after {} s of warmup) per phase, against {}\n\n",
        args.clients, args.echo_tool, args.environment, args.seconds, args.warmup, args.common.url
    );
    let mut table = Table::new(&[
        "phase",
        "echo calls",
        "errors",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "client cpu s",
        "server cpu s",
        "spins (deadline_exceeded)",
        "spin p50 ms",
    ]);
    for (name, p) in [("quiet", quiet), ("noisy (spinner)", noisy)] {
        let secs = p.elapsed.as_secs_f64();
        table.row(vec![
            name.into(),
            count(p.echo.calls as u64),
            count(p.echo.errors),
            rate(p.echo.per_s),
            ms(p.echo.p50),
            ms(p.echo.p99),
            ms(p.echo.max),
            format!("{:.2} ({:.0}%)", p.client_cpu, 100.0 * p.client_cpu / secs),
            p.server_cpu.map_or_else(
                || "-".into(),
                |c| format!("{c:.2} ({:.0}%)", 100.0 * c / secs),
            ),
            p.spins
                .as_ref()
                .map_or_else(|| "-".into(), |(s, _)| count(s.calls as u64)),
            p.spins
                .as_ref()
                .map_or_else(|| "-".into(), |(s, _)| ms(s.p50)),
        ]);
    }
    out.push_str(&table.render());

    let ratio = quiet
        .echo
        .p99
        .zip(noisy.echo.p99)
        .filter(|(q, _)| *q > 0.0)
        .map(|(q, n)| n / q);
    let holds = ratio.is_some_and(|r| r <= TARGET_RATIO);
    out.push_str(&format!(
        "\np99 noisy / p99 quiet: {} (target ≤ {TARGET_RATIO}: {})\n",
        ratio.map_or_else(|| "-".into(), |r| format!("{r:.2}")),
        if holds { "holds" } else { "does not hold" }
    ));
    let other_spins: u64 = noisy.spins.as_ref().map_or(0, |(_, o)| o.values().sum());
    if let Some((_, other)) = noisy.spins.as_ref().filter(|_| other_spins > 0) {
        out.push_str(&format!(
            "spins that did not answer {DEADLINE_EXCEEDED}: {other:?}\n"
        ));
    }
    for failure in quiet.failures.iter().chain(&noisy.failures) {
        out.push_str(&format!("{failure}\n"));
    }

    let phase_json = |p: &Phase| {
        let ms3 = |v: Option<f64>| v.map(|v| round(v, 3));
        json!({
            "calls": p.echo.calls, "errors": p.echo.errors, "per_s": round(p.echo.per_s, 1),
            "p50_ms": ms3(p.echo.p50), "p99_ms": ms3(p.echo.p99), "max_ms": ms3(p.echo.max),
            "elapsed_s": round(p.elapsed.as_secs_f64(), 3),
            "server_cpu_s": p.server_cpu.map(|c| round(c, 3)),
            "client_cpu_s": round(p.client_cpu, 3),
            "spins_deadline_exceeded": p.spins.as_ref().map(|(s, _)| s.calls),
            "spin_p50_ms": p.spins.as_ref().and_then(|(s, _)| ms3(s.p50)),
            "spins_other": p.spins.as_ref().map(|(_, o)| o.clone()),
            "failures": p.failures,
        })
    };
    let json = json!({
        "bench": "isolation", "url": args.common.url, "environment": args.environment,
        "clients": args.clients, "seconds": args.seconds, "warmup_s": args.warmup,
        "quiet": phase_json(quiet), "noisy": phase_json(noisy),
        "p99_ratio": ratio.map(|r| round(r, 3)), "target_ratio": TARGET_RATIO, "target_holds": holds,
    });
    let spun = noisy.spins.as_ref().is_some_and(|(s, _)| s.calls > 0);
    Outcome {
        table: out,
        json,
        ok: quiet.echo.errors == 0 && noisy.echo.errors == 0 && other_spins == 0 && spun,
    }
}
