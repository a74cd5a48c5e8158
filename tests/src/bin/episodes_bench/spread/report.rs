//! The report of both loads, as Markdown and JSON.

use envhost_tests::load::stats::Summary;
use serde_json::json;

use super::Args;
use super::turn::Load;
use crate::Outcome;
use crate::table::{Table, count, ms, rate, round};

/// The least spread calls/s / single-episode calls/s the project aims for.
const TARGET_RATIO: f64 = 0.8;

/// A load's figures for the report.
struct Figures {
    /// Its calls over every turn.
    summary: Summary,
    /// The server's CPU per successful call, in µs.
    server_us: Option<f64>,
    /// This process' CPU per successful call, in µs.
    client_us: Option<f64>,
    /// The machine's stolen share of its CPU time over the turns, 0 to 1.
    steal: Option<f64>,
    /// The machine's idle share of its CPU time over the turns, 0 to 1.
    idle: Option<f64>,
}

impl Figures {
    fn of(load: &mut Load) -> Self {
        let summary = Summary::of(&mut load.stats, load.elapsed);
        let per_call = |cpu: f64| (summary.calls > 0).then(|| cpu * 1e6 / summary.calls as f64);
        let machine = load.machine();
        Self {
            server_us: load.server_cpu().and_then(per_call),
            client_us: per_call(load.client_cpu),
            steal: machine.and_then(|m| m.steal_share()),
            idle: machine.and_then(|m| m.idle_share()),
            summary,
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The spread load's name: its episodes, its clients and their connections.
fn spread_name(args: &Args) -> String {
    let clients = args.spread_clients();
    if clients == args.episodes {
        return format!("{} episodes, 1 client each", args.episodes);
    }
    let connections = if args.share_connections {
        "a connection per client"
    } else {
        "a connection per episode"
    };
    format!(
        "{} episodes, {clients} clients taking turns, {connections}",
        args.episodes
    )
}

/// The report of both loads (their calls are drained into the summaries).
pub(super) fn report(args: &Args, mut single: Load, mut spread: Load) -> Outcome {
    let pair_ratios: Vec<f64> = single
        .rates
        .iter()
        .zip(&spread.rates)
        .filter(|(s, _)| **s > 0.0)
        .map(|(s, m)| m / s)
        .collect();
    let a = Figures::of(&mut single);
    let b = Figures::of(&mut spread);
    let mut out = format!(
        "### episodes_bench spread: {} against {} clients on the root episode, {} turns of each \
         ({} s measured after {} s of warmup, ABBA order), against {}\n\n",
        spread_name(args),
        args.clients,
        args.turns,
        args.seconds,
        args.warmup,
        args.common.url
    );
    let mut table = Table::new(&[
        "load",
        "calls",
        "errors",
        "calls/s",
        "turns: lowest–highest calls/s",
        "p50 ms",
        "p99 ms",
        "server cpu µs/call",
        "client cpu µs/call",
        "steal %",
        "idle %",
    ]);
    let us = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1}"));
    let share = |v: Option<f64>| us(v.map(|v| 100.0 * v));
    for (name, load, f) in [
        (format!("1 episode, {} clients", args.clients), &single, &a),
        (spread_name(args), &spread, &b),
    ] {
        let lowest = load.rates.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = load.rates.iter().copied().fold(0.0, f64::max);
        table.row(vec![
            name,
            count(f.summary.calls as u64),
            count(f.summary.errors),
            rate(f.summary.per_s),
            format!("{}–{}", rate(lowest), rate(highest)),
            ms(f.summary.p50),
            ms(f.summary.p99),
            us(f.server_us),
            us(f.client_us),
            share(f.steal),
            share(f.idle),
        ]);
    }
    out.push_str(&table.render());

    let ratio = (a.summary.per_s > 0.0).then(|| b.summary.per_s / a.summary.per_s);
    let holds = ratio.is_some_and(|r| r >= TARGET_RATIO);
    let percent = |r: f64| format!("{:.1}%", 100.0 * r);
    let lowest = pair_ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = pair_ratios.iter().copied().fold(0.0, f64::max);
    out.push_str(&format!(
        "\nspread / single calls/s: {} (target ≥ {}: {}); turn by turn: median {}, {}–{}\n",
        ratio.map_or_else(|| "-".into(), percent),
        percent(TARGET_RATIO),
        if holds { "holds" } else { "does not hold" },
        median(&pair_ratios).map_or_else(|| "-".into(), percent),
        percent(lowest),
        percent(highest),
    ));
    let failures: Vec<String> = single
        .stats
        .iter()
        .chain(&spread.stats)
        .enumerate()
        .filter_map(|(i, s)| s.failure(i))
        .collect();
    for failure in &failures {
        out.push_str(&format!("{failure}\n"));
    }

    let load_json = |load: &Load, f: &Figures| {
        json!({
            "calls": f.summary.calls, "errors": f.summary.errors,
            "per_s": round(f.summary.per_s, 1),
            "turn_per_s": load.rates.iter().map(|r| round(*r, 1)).collect::<Vec<_>>(),
            "p50_ms": f.summary.p50.map(|v| round(v, 3)),
            "p99_ms": f.summary.p99.map(|v| round(v, 3)),
            "elapsed_s": round(load.elapsed.as_secs_f64(), 3),
            "server_cpu_us_per_call": f.server_us.map(|v| round(v, 1)),
            "client_cpu_us_per_call": f.client_us.map(|v| round(v, 1)),
            "steal": f.steal.map(|v| round(v, 4)),
            "idle": f.idle.map(|v| round(v, 4)),
            "turn_steal": load.machine.iter()
                .map(|m| m.and_then(|m| m.steal_share()).map(|v| round(v, 4)))
                .collect::<Vec<_>>(),
        })
    };
    let json = json!({
        "bench": "spread", "url": args.common.url, "episodes": args.episodes,
        "clients": args.clients, "spread_clients": args.spread_clients(),
        "share_connections": args.share_connections,
        "turns": args.turns, "seconds": args.seconds,
        "warmup_s": args.warmup,
        "single": load_json(&single, &a), "spread": load_json(&spread, &b),
        "ratio": ratio.map(|r| round(r, 4)),
        "turn_ratios": pair_ratios.iter().map(|r| round(*r, 4)).collect::<Vec<_>>(),
        "median_turn_ratio": median(&pair_ratios).map(|r| round(r, 4)),
        "target_ratio": TARGET_RATIO, "target_holds": holds,
    });
    Outcome {
        table: out,
        json,
        ok: failures.is_empty() && a.summary.errors == 0 && b.summary.errors == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn args(line: &[&str]) -> Args {
        let args = Cli::try_parse_from(std::iter::once("spread").chain(line.iter().copied()))
            .unwrap()
            .args;
        args.validate().unwrap();
        args
    }

    #[test]
    fn the_spread_load_is_named_after_its_clients_and_connections() {
        assert_eq!(spread_name(&args(&[])), "1000 episodes, 1 client each");
        assert_eq!(
            spread_name(&args(&["--episodes", "10", "--spread-clients", "2"])),
            "10 episodes, 2 clients taking turns, a connection per episode"
        );
        assert_eq!(
            spread_name(&args(&["--spread-clients", "8", "--share-connections"])),
            "1000 episodes, 8 clients taking turns, a connection per client"
        );
    }

    #[test]
    fn spread_clients_must_be_between_one_and_the_episodes() {
        for bad in ["0", "11"] {
            let cli = Cli::try_parse_from(["spread", "--episodes", "10", "--spread-clients", bad]);
            assert!(
                cli.unwrap().args.validate().is_err(),
                "--spread-clients {bad}"
            );
        }
    }

    #[test]
    fn medians_take_the_middle() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
