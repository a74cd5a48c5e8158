"""Markdown tables from the raw outputs of tests/bench/compare.sh.

    python3 tests/bench/report.py OUT_DIR

OUT_DIR holds servers.json (the servers' urls, pids and idle/end memory), for each server
(reference, envhost) <server>-mcp_load-c8.json, <server>-mcp_load-c1.json (mcp_load --json) and
<server>-agentenv_bench-c8.json (the shared bench's JSON line), and a <stem>.run.json beside each
(wall time, the machine's busy cores, other builds seen). Standard library only.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

SERVERS = ("reference", "envhost")
MIB = 1024  # KiB per MiB
TARGET_RATIO = 50.0
TARGET_P50_MS = 0.5
TARGET_RSS_MIB = 30.0


def load(out: Path, name: str) -> dict:
    return json.loads((out / name).read_text())


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def num(value: float | None, places: int = 1) -> str:
    return "-" if value is None else f"{value:,.{places}f}"


def ms(value: float | None) -> str:
    return num(value, 3)


def cpu(seconds: float | None, window: float) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s ({100 * seconds / window:.0f}%)"


def kib(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def tool_rows(out: Path) -> tuple[list[dict], dict]:
    """One row per (server, client) of the send_message load, normalised across the two clients."""
    rows, by_key = [], {}
    for server in SERVERS:
        for clients in (8, 1):
            r = load(out, f"{server}-mcp_load-c{clients}.json")
            usage = r.get("server") or {}
            memory = usage.get("rss_kib") or {}
            row = {
                "server": server, "client": "mcp_load", "clients": clients, "calls": r["calls"],
                "errors": r["errors"], "per_s": r["per_s"], "p50": r["p50_ms"], "p99": r["p99_ms"],
                "window": r["elapsed_s"], "client_cpu": r["client_cpu_s"], "server_cpu": usage.get("cpu_s"),
                "before": memory.get("before") or {}, "after": memory.get("after") or {},
                # calls in the warmup were sent too, at about the same rate
                "sent": (r["calls"] + r["errors"]) * (r["warmup_s"] + r["elapsed_s"]) / r["elapsed_s"],
                "sent_exact": False, "run": load(out, f"{server}-mcp_load-c{clients}.run.json"),
                "stem": f"{server}-mcp_load-c{clients}",
            }
            rows.append(row)
            by_key[(server, "mcp_load", clients)] = row
        b = load(out, f"{server}-agentenv_bench-c8.json")
        t = b["tool_send_message"]
        row = {
            "server": server, "client": "agentenv_bench.py", "clients": b["clients"], "calls": t["calls"],
            "errors": t["errors"], "per_s": t["per_s"], "p50": t["p50_ms"], "p99": t["p99_ms"],
            "window": t["elapsed_s"], "client_cpu": t["client_cpu_s"], "server_cpu": t["server_cpu_s"],
            "before": (b.get("server_rss_kib") or {}).get("before") or {},
            "after": t.get("rss_after_phase") or {},
            "sent": t["calls"] + t["errors"], "sent_exact": True,
            "run": load(out, f"{server}-agentenv_bench-c8.run.json"), "stem": f"{server}-agentenv_bench-c8",
            "bench": b,
        }
        rows.append(row)
        by_key[(server, "agentenv_bench.py", 8)] = row
    return rows, by_key


def main() -> None:
    out = Path(sys.argv[1])
    servers = load(out, "servers.json")
    rows, by = tool_rows(out)
    parts = []

    parts.append("### Tool calls (`slack_send_message`, closed loop)\n")
    parts.append(table(
        ["server", "client", "clients", "calls", "errors", "calls/s", "p50 ms", "p99 ms", "client CPU",
         "server CPU", "VmRSS before → after (KiB)", "VmHWM before → after (KiB)"],
        [[r["server"], r["client"], r["clients"], f"{r['calls']:,}", r["errors"], num(r["per_s"]), ms(r["p50"]),
          ms(r["p99"]), cpu(r["client_cpu"], r["window"]), cpu(r["server_cpu"], r["window"]),
          f"{kib(r['before'].get('VmRSS'))} → {kib(r['after'].get('VmRSS'))}",
          f"{kib(r['before'].get('VmHWM'))} → {kib(r['after'].get('VmHWM'))}"] for r in rows]))
    parts.append("\nCPU percentages are of the measured window (100% = one core). mcp_load's memory is read "
                 "before it seeds and at the end of its window, the Python bench's before its first phase "
                 "and after its tool phase (both before the environment is reset).\n")

    ratio_rust = by[("envhost", "mcp_load", 8)]["per_s"] / by[("reference", "mcp_load", 8)]["per_s"]
    py_ref, py_env = by[("reference", "agentenv_bench.py", 8)], by[("envhost", "agentenv_bench.py", 8)]
    ratio_py = py_env["per_s"] / py_ref["per_s"]
    p50_env = by[("envhost", "mcp_load", 1)]["p50"]
    p50_ref = by[("reference", "mcp_load", 1)]["p50"]
    parts.append("### envhost / reference\n")
    parts.append(table(["measure", "reference", "envhost", "envhost / reference"], [
        ["tool calls/s, 8 clients, mcp_load", num(by[("reference", "mcp_load", 8)]["per_s"]),
         num(by[("envhost", "mcp_load", 8)]["per_s"]), f"**{ratio_rust:.1f}×**"],
        ["tool calls/s, 8 clients, agentenv_bench.py", num(py_ref["per_s"]), num(py_env["per_s"]),
         f"{ratio_py:.1f}× (Python client CPU against envhost: "
         f"{100 * py_env['client_cpu'] / py_env['window']:.0f}% of a core)"],
        ["single-client tool call p50 (mcp_load)", f"{ms(p50_ref)} ms", f"**{ms(p50_env)} ms**",
         f"{p50_env / p50_ref:.3f}× ({p50_ref / p50_env:.1f}× lower)"],
    ]))

    parts.append("\n### Memory\n")
    mem_rows = []
    for server in SERVERS:
        mem_rows.append([server, "idle, right after start", "-", kib(servers[server]["idle"]["VmRSS"]), "-", "-",
                         "-"])
        for i, r in enumerate([r for r in rows if r["server"] == server]):
            before, after = r["before"].get("VmRSS"), r["after"].get("VmRSS")
            growth = None if before is None or after is None else after - before
            if i > 0:
                per_message = "n/a*"
            elif growth is None or not r["sent"]:
                per_message = "?"
            else:
                per_message = f"**{growth * 1024 / r['sent']:,.0f}**"
            who = f"{r['client']} {r['clients']} client{'' if r['clients'] == 1 else 's'}"
            mem_rows.append([server, who, kib(before), kib(after),
                             "?" if growth is None else f"{growth:+,}",
                             f"{'' if r['sent_exact'] else '≈'}{r['sent']:,.0f}", per_message])
        end = servers[server]["end"]
        mem_rows.append([server, "end of the run (VmHWM = peak)", "-",
                         f"{kib(end['VmRSS'])} (VmHWM {kib(end['VmHWM'])})", "-", "-", "-"])
    parts.append(table(["server", "when", "VmRSS before (KiB)", "VmRSS after (KiB)", "growth (KiB)",
                        "messages sent", "bytes / message"], mem_rows))
    parts.append("\nThe slack environment keeps every message sent until it is reset, so the growth includes "
                 "the environment's own data. Runs are in table order on one server process each; mcp_load "
                 "resets the environment after its run, the Python bench after each phase. mcp_load's "
                 "messages include its 1 s warmup (estimated at the measured rate: ≈). Bytes per message are "
                 "the first run's on a fresh server; *later runs reuse the memory the previous run's reset "
                 "freed, so their growth is not per message.\n")

    parts.append("### The Python bench's other phases (8 clients)\n")
    other = []
    for server in SERVERS:
        b = by[(server, "agentenv_bench.py", 8)]["bench"]
        for phase, unit in (("data_cycle", "cycles"), ("card_fetch", "fetches")):
            p = b[phase]
            other.append([server, phase, f"{p[unit]:,}", p["errors"], num(p["per_s"]), ms(p["p50_ms"]),
                          ms(p["p99_ms"]), cpu(p["client_cpu_s"], p["elapsed_s"]),
                          cpu(p["server_cpu_s"], p["elapsed_s"])])
    parts.append(table(["server", "phase", "ops", "errors", "ops/s", "p50 ms", "p99 ms", "client CPU",
                        "server CPU"], other))

    shared = by[("envhost", "agentenv_bench.py", 8)]["bench"]["server_rss_kib"]["after"]
    shared_peak = shared["VmHWM"] / MIB
    env_peak = servers["envhost"]["end"]["VmHWM"] / MIB
    env_max_rss = max([servers["envhost"]["idle"]["VmRSS"], servers["envhost"]["end"]["VmRSS"]]
                      + [r["after"].get("VmRSS") or 0 for r in rows if r["server"] == "envhost"]) / MIB
    parts.append("\n### Targets\n")
    yes = lambda ok: "**holds**" if ok else "**does not hold**"  # noqa: E731
    parts.append(table(["target", "measured", "verdict"], [
        [f"tool calls/s with 8 clients ≥ {TARGET_RATIO:.0f}× the reference (mcp_load)", f"{ratio_rust:.1f}×",
         yes(ratio_rust >= TARGET_RATIO)],
        [f"single-client tool call p50 ≤ {TARGET_P50_MS} ms", f"{ms(p50_env)} ms", yes(p50_env <= TARGET_P50_MS)],
        [f"envhost RSS while serving slack ≤ {TARGET_RSS_MIB:.0f} MiB: under the shared bench "
         "(all three phases, from a fresh start)",
         f"peak (VmHWM) {shared_peak:.1f} MiB; VmRSS at its end {shared['VmRSS'] / MIB:.1f} MiB",
         yes(shared_peak <= TARGET_RSS_MIB)],
        [f"envhost RSS ≤ {TARGET_RSS_MIB:.0f} MiB: over the whole run, mcp_load's hundreds of thousands "
         "of messages stored by the environment included",
         f"peak (VmHWM) {env_peak:.1f} MiB; highest VmRSS read {env_max_rss:.1f} MiB",
         yes(env_peak <= TARGET_RSS_MIB)],
    ]))

    parts.append("\n### Run quality\n")
    quality = []
    for r in rows:
        run = r["run"]
        quality.append([r["stem"], num(run["wall_s"], 1), num(run["machine_busy_cores"], 2),
                        num((r["client_cpu"] + (r["server_cpu"] or 0)) / r["window"], 2),
                        " ".join(run["others_building"]) or "none"])
    parts.append(table(["bench", "wall s", "machine busy cores (whole bench)",
                        "client + server cores (window)", "cargo/rustc at its end"], quality))
    parts.append("\nThe machine's busy cores are over the bench process' whole life (sessions, warmup, for "
                 "the Python bench all three phases); client + server over the measured tool-call window.")
    failures = [f for r in rows if r["client"] == "mcp_load"
                for f in load(out, f"{r['stem']}.json").get("failures") or []]
    if failures:
        parts.append("\nmcp_load failures:\n" + "\n".join(f"- {f}" for f in failures))
    print("\n".join(parts))


if __name__ == "__main__":
    main()
