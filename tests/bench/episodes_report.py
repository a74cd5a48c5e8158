"""Markdown of a tests/bench/episodes.sh run: `python3 episodes_report.py OUT_DIR`.

Reads OUT_DIR/{density,calls,admission,isolation}.txt (the benches' own Markdown, shown as
they are) and OUT_DIR/spread.txt (lines `<round> <mcp_load --json line>`), and prints the
spread table: per round, the single-episode figure (8 clients on one episode), the aggregate
over 1,000 episodes (1,000 clients, each its own episode and MCP session), their ratio, and the
median ratio over the rounds.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def section(out: Path, name: str, title: str) -> str:
    path = out / f"{name}.txt"
    text = path.read_text().strip() if path.exists() else "(not run)"
    return f"### {title}\n\n{text}\n"


def spread(out: Path) -> str:
    rounds: dict[int, dict[str, dict]] = {}
    for line in (out / "spread.txt").read_text().splitlines():
        round_text, raw = line.split(" ", 1)
        run = json.loads(raw)
        kind = "single" if run["episodes"] == 1 else "many"
        rounds.setdefault(int(round_text), {})[kind] = run
    rows = [
        "| round | 1 episode, 8 clients: calls/s | p99 ms | server CPU µs/call "
        "| 1,000 episodes, 1,000 clients: calls/s | p99 ms | server CPU µs/call | ratio |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    ratios = []
    for number, runs in sorted(rounds.items()):
        single, many = runs.get("single"), runs.get("many")
        if not single or not many:
            continue
        ratio = many["per_s"] / single["per_s"]
        ratios.append(ratio)
        rows.append(
            f"| {number} | {single['per_s']:,.0f} | {single['p99_ms']:.3f} | {cpu_per_call(single)} "
            f"| {many['per_s']:,.0f} | {many['p99_ms']:.1f} | {cpu_per_call(many)} | {ratio:.1%} |"
        )
    if not ratios:
        return "### Spread\n\n(no complete round)\n"
    median = statistics.median(ratios)
    verdict = "holds" if median >= 0.8 else "does not hold"
    return (
        "### Spread: 1,000 episodes against one\n\n" + "\n".join(rows) + "\n\n"
        f"Median ratio over {len(ratios)} rounds: {median:.1%} (target ≥ 80%: {verdict}); "
        f"lowest {min(ratios):.1%}, highest {max(ratios):.1%}.\n"
    )


def cpu_per_call(run: dict) -> str:
    server = run.get("server") or {}
    cpu = server.get("cpu_s")
    if cpu is None or not run["calls"]:
        return "-"
    return f"{cpu / run['calls'] * 1e6:.1f}"


def main() -> None:
    out = Path(sys.argv[1])
    print(section(out, "density", "Density and creation (in process)"))
    print(section(out, "calls", "In-process tool calls, one core"))
    print(section(out, "admission", "Admission: 20,000 creates against --max-episodes 10000"))
    print(spread(out))
    print(section(out, "isolation", "Isolation: a spinning episode beside 8 clients"))


if __name__ == "__main__":
    main()
