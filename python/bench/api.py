"""The Python package's in-process speed (docs/python.md), against the Rust API's host_bench in
the same run: tool calls per second on one thread (counter's `counter_counts`, slack's
`slack_send_message`), episode creation, and 1, 2 and 4 threads each calling an episode of its
own, with a trivial call (`counter_counts`, about 3 µs) and with one whose guest works
(`slack_list_inbox` of an inbox of 100 messages, about 100 µs). Prints a Markdown table.

    .venv/bin/python python/bench/api.py [--seconds 5] [--rounds 3]

Needs the wheel installed (make wheel; pip install dist/envhost-*.whl) and the guests built.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import threading
import time
from pathlib import Path

import envhost

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / "guests" / "target" / "wasm32-wasip2" / "release"
GENERAL = [{"kind": "data", "data": {"channels": [{"name": "general"}]}}]


def calls_per_second(episode: envhost.Episode, tool: str, arguments: dict, seconds: float,
                     role: str | None = None) -> float:
    """Closed-loop calls of `tool` (as `role`) on one thread for `seconds`."""
    calls, started = 0, time.perf_counter()
    deadline = started + seconds
    while True:
        if role is None:
            for _ in range(100):
                episode.call_tool(tool, arguments)
        else:
            for _ in range(100):
                episode.call_tool(tool, arguments, role=role)
        calls += 100
        now = time.perf_counter()
        if now >= deadline:
            return calls / (now - started)


def creation_us(host: envhost.Host, count: int) -> tuple[float, float]:
    """p50 and p99 of `host.episode("counter")`, in µs, over `count` creations (closed after)."""
    took, made = [], []
    for _ in range(count):
        started = time.perf_counter()
        made.append(host.episode("counter"))
        took.append((time.perf_counter() - started) * 1e6)
    for episode in made:
        episode.close()
    took.sort()
    return took[len(took) // 2], took[int(len(took) * 0.99)]


INBOX = [{"kind": "data", "data": {"channels": [{"name": "general"}], "messages": [
    {"channel": "general", "user": "bob", "text": f"message {i} for alice", "to": "alice"} for i in range(100)]}}]


def threaded(host: envhost.Host, threads: int, seconds: float, inbox: bool = False) -> float:
    """Total calls/s of `threads` threads, each on an episode of its own: counter's
    `counter_counts`, or with `inbox` slack's `slack_list_inbox` as alice over INBOX."""
    episodes = [host.episode("slack", INBOX) if inbox else host.episode("counter") for _ in range(threads)]
    totals = [0.0] * threads
    barrier = threading.Barrier(threads)

    def work(i: int) -> None:
        barrier.wait()
        if inbox:
            totals[i] = calls_per_second(episodes[i], "slack_list_inbox", {}, seconds, role="alice")
        else:
            totals[i] = calls_per_second(episodes[i], "counter_counts", {}, seconds)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for episode in episodes:
        episode.close()
    return sum(totals)


def batched(host: envhost.Host, episodes: int, seconds: float) -> float:
    """Counter calls/s through `host.call_many`, batches of 1,000 calls over `episodes` episodes."""
    made = [host.episode("counter") for _ in range(episodes)]
    batch = [(made[i % episodes], "counter_counts", {}) for i in range(1000)]
    calls, started = 0, time.perf_counter()
    while (now := time.perf_counter()) < started + seconds:
        host.call_many(batch)
        calls += len(batch)
    for episode in made:
        episode.close()
    return calls / (now - started)


def rust_calls_per_second(seconds: float) -> float | None:
    """The Rust API's figure in the same run: host_bench calls (counter, one episode)."""
    binary = REPO / "target" / "release" / "host_bench"
    if not binary.exists():
        return None
    out = subprocess.run([str(binary), "calls", "--seconds", str(int(seconds)), "--episodes", "1"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    if rows:
        return float(rows[-1][3])
    return None


def spread(values: list[float], unit: str = "", digits: int = 0) -> str:
    return (f"**{statistics.median(values):,.{digits}f}{unit}** "
            f"({min(values):,.{digits}f}–{max(values):,.{digits}f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    host = envhost.Host({"counter": RELEASE / "counter.wasm", "slack": RELEASE / "slack.wasm"}, max_episodes=10_000)
    counter = host.episode("counter")
    slack = host.episode("slack", GENERAL)
    rows: dict[str, list[float]] = {k: [] for k in ("rust", "counter", "slack", "p50", "p99", "t1", "t2", "t4",
                                                   "batch", "i1", "i4")}
    for _ in range(args.rounds):
        if (rust := rust_calls_per_second(args.seconds)) is not None:
            rows["rust"].append(rust)
        rows["counter"].append(calls_per_second(counter, "counter_counts", {}, args.seconds))
        rows["slack"].append(calls_per_second(slack, "slack_send_message", {"channel": "general", "text": "hi"},
                                              args.seconds))
        slack.reset()
        slack.add(GENERAL)
        p50, p99 = creation_us(host, 5_000)
        rows["p50"].append(p50)
        rows["p99"].append(p99)
        for n in (1, 2, 4):
            rows[f"t{n}"].append(threaded(host, n, args.seconds))
        for n in (1, 4):
            rows[f"i{n}"].append(threaded(host, n, args.seconds, inbox=True))
        rows["batch"].append(batched(host, 4, args.seconds))
    scaling = [t4 / t1 for t1, t4 in zip(rows["t1"], rows["t4"])]
    print(f"envhost Python package, {args.rounds} rounds of {args.seconds:g} s; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f}\n")
    print("| figure | median (min–max) |\n|---|---|")
    if rows["rust"]:
        print(f"| Rust API (host_bench calls), counter_counts calls/s | {spread(rows['rust'])} |")
    print(f"| counter_counts calls/s, one thread | {spread(rows['counter'])} |")
    print(f"| slack_send_message calls/s, one thread | {spread(rows['slack'])} |")
    print(f"| episode creation p50 / p99 (µs) | {spread(rows['p50'], digits=1)} / {spread(rows['p99'], digits=1)} |")
    for n in (1, 2, 4):
        print(f"| counter calls/s, {n} thread{'s' if n > 1 else ''} | {spread(rows[f't{n}'])} |")
    print(f"| 4 threads ÷ 1 thread, counter | {spread(scaling, '×', 2)} |")
    for n in (1, 4):
        print(f"| slack_list_inbox (100 messages) calls/s, {n} thread{'s' if n > 1 else ''} | {spread(rows[f'i{n}'])} |")
    inbox_scaling = [i4 / i1 for i1, i4 in zip(rows["i1"], rows["i4"])]
    print(f"| 4 threads ÷ 1 thread, slack_list_inbox | {spread(inbox_scaling, '×', 2)} |")
    batching = [b / t1 for t1, b in zip(rows["t1"], rows["batch"])]
    print(f"| counter calls/s, one thread, call_many batches of 1,000 over 4 episodes | {spread(rows['batch'])} |")
    print(f"| call_many ÷ 1 thread | {spread(batching, '×', 2)} |")


if __name__ == "__main__":
    main()
