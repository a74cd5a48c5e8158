"""Markdown of a tests/bench/episodes.sh run: `python3 episodes_report.py OUT_DIR`.

Reads OUT_DIR/{density,calls,admission,isolation}.txt (the benches' own Markdown, shown as
they are) and OUT_DIR/spread.txt (lines `<run> <episodes_bench spread --json line>`), and prints
the spread table: per run, the single-episode figure (8 clients on one episode), the aggregate
over 1,000 episodes (each with its own client and MCP session), both over every turn of the run,
their ratio, the median of the run's turn-by-turn ratios, and the median ratio over the runs;
then the machine's steal under each load and the median ratio of the turn pairs in which neither
load lost more than STEAL_LIMIT of the machine's CPU time to steal.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

# The most steal (the share of the machine's CPU time the hypervisor gave to others while a vCPU
# wanted to run) a turn may have to count among the quiet turn pairs.
STEAL_LIMIT = 0.05


def section(out: Path, name: str, title: str) -> str:
    path = out / f"{name}.txt"
    text = path.read_text().strip() if path.exists() else "(not run)"
    return f"### {title}\n\n{text}\n"


def spread(out: Path) -> str:
    rows = [
        "| run | 1 episode, 8 clients: calls/s | p99 ms | server CPU µs/call "
        "| 1,000 episodes, 1 client each: calls/s | p99 ms | server CPU µs/call | ratio "
        "| turn by turn: median (lowest–highest) | steal: 1 episode / 1,000 |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    ratios = []
    quiet = []
    for line in (out / "spread.txt").read_text().splitlines():
        number, raw = line.split(" ", 1)
        run = json.loads(raw)
        if run.get("ratio") is None:
            continue
        single, many, turns = run["single"], run["spread"], run["turn_ratios"]
        ratios.append(run["ratio"])
        rows.append(
            f"| {number} | {single['per_s']:,.0f} | {single['p99_ms']:.3f} "
            f"| {cpu(single)} | {many['per_s']:,.0f} | {many['p99_ms']:.1f} | {cpu(many)} "
            f"| {run['ratio']:.1%} | {run['median_turn_ratio']:.1%} "
            f"({min(turns):.1%}–{max(turns):.1%}) | {steal(single)} / {steal(many)} |"
        )
        quiet += quiet_pairs(single, many, turns)
    if not ratios:
        return "### Spread\n\n(no complete run)\n"
    median = statistics.median(ratios)
    verdict = "holds" if median >= 0.8 else "does not hold"
    if median >= 0.8 and not quiet:
        verdict += ", but no turn pair was free of steal: see below"
    return (
        "### Spread: 1,000 episodes against one\n\n" + "\n".join(rows) + "\n\n"
        f"Median ratio over {len(ratios)} runs: {median:.1%} (target ≥ 80%: {verdict}); "
        f"lowest {min(ratios):.1%}, highest {max(ratios):.1%}.\n\n" + quiet_line(quiet)
    )


def steal(load: dict) -> str:
    value = load.get("steal")
    return "-" if value is None else f"{value:.1%}"


def quiet_pairs(single: dict, many: dict, turns: list) -> list:
    """The turn ratios of the pairs whose turns both had steal readings at or below the limit."""
    pairs = zip(single.get("turn_steal", []), many.get("turn_steal", []), turns)
    return [
        ratio
        for a, b, ratio in pairs
        if a is not None and b is not None and max(a, b) <= STEAL_LIMIT
    ]


def quiet_line(quiet: list) -> str:
    if not quiet:
        return (
            f"No turn pair of any run has steal readings at or below {STEAL_LIMIT:.0%} "
            "in both turns.\n"
        )
    median = statistics.median(quiet)
    verdict = "holds" if median >= 0.8 else "does not hold"
    return (
        f"Turn pairs with both turns at or below {STEAL_LIMIT:.0%} steal: {len(quiet)}, "
        f"median ratio {median:.1%} ({min(quiet):.1%}–{max(quiet):.1%}; target ≥ 80%: "
        f"{verdict}). Steal slows the single-episode load most (it idles and wakes the vCPUs), "
        "so runs with steal overstate the ratio.\n"
    )


def cpu(load: dict) -> str:
    value = load.get("server_cpu_us_per_call")
    return "-" if value is None else f"{value:.1f}"


def main() -> None:
    out = Path(sys.argv[1])
    print(section(out, "density", "Density and creation (in process)"))
    print(section(out, "calls", "In-process tool calls, one core"))
    print(section(out, "admission", "Admission: 20,000 creates against --max-episodes 10000"))
    print(spread(out))
    print(section(out, "isolation", "Isolation: a spinning episode beside 8 clients"))


if __name__ == "__main__":
    main()
