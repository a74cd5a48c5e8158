"""Measures slack implementations side by side under one envhost and prints a Markdown table:
component size, compile time (first start with an empty compiled-artefact cache, then a second
start with it), instantiate p50/p90 (`POST /episodes`), RSS per episode, and tool calls/s
(mcp_load, 1 and 8 clients).

    .venv/bin/python tests/bench/languages.py \\
        --envhost /work/bin/envhost-af28a8f --mcp-load /work/bin/mcp_load \\
        slack=guests/target/wasm32-wasip2/release/slack.wasm \\
        slack-py=guests/target/wasm32-wasip2/release/slack-py.wasm

Everything it starts is stopped when it ends; it talks to loopback only, in bounded loops.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

SEED = {"jsonrpc": "2.0", "id": 1, "method": "data/add", "params": {"parts": [
    {"kind": "data", "data": {"channels": [{"name": "general", "topic": "t"}]}}]}}
GET = {"jsonrpc": "2.0", "id": 2, "method": "data/get"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Envhost:
    """`envhost serve` of the given environments, with its own compiled-artefact cache."""

    def __init__(self, binary: str, envs: list[str], cache_home: str, log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        env = {**os.environ, "XDG_CACHE_HOME": cache_home, "ENVIRONMENT_NAME": ""}
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [binary, "serve", *envs, "--host", "127.0.0.1", "--port", str(self.port)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/ready", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"envhost not ready:\n{log.read_text()[-2000:]}")

    def load_ms(self) -> dict[str, int]:
        """`took_ms` of each environment's load, from the log."""
        return {m[1]: int(m[2]) for m in re.finditer(r"loaded environment=(\S+) took_ms=(\d+)", self.log.read_text())}

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def instantiate_and_memory(host: Envhost, name: str, episodes: int) -> dict[str, float]:
    """Creates `episodes` episodes one after the other (each timed), then reads data/get of each
    (touching its instance); the RSS growth over both, per episode."""
    client = httpx.Client(timeout=60)
    before = rss_kib(host.process.pid)
    times, ids = [], []
    for _ in range(episodes):
        start = time.perf_counter()
        response = client.post(f"{host.base}/episodes", json={"environment": name})
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    created = rss_kib(host.process.pid)
    for episode in ids:
        client.post(f"{host.base}/episodes/{episode}/agentenv", json=SEED)
        assert "result" in client.post(f"{host.base}/episodes/{episode}/agentenv", json=GET).json()
    used = rss_kib(host.process.pid)
    for episode in ids:
        client.delete(f"{host.base}/episodes/{episode}")
    times.sort()
    return {"p50_ms": statistics.median(times), "p90_ms": times[int(len(times) * 0.9)],
            "created_kib": (created - before) / episodes, "used_kib": (used - before) / episodes}


def calls_per_second(mcp_load: str, host: Envhost, name: str, clients: int, seconds: int) -> float:
    out = subprocess.run([mcp_load, "--url", host.base, "--clients", str(clients), "--episodes", str(clients),
                          "--environment", name, "--env-name", "slack", "--seconds", str(seconds), "--json"],
                         capture_output=True, text=True, timeout=seconds + 120, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return float(result["per_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envhost", required=True)
    parser.add_argument("--mcp-load", required=True)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("environments", nargs="+", help="NAME=PATH.wasm")
    args = parser.parse_args()
    names = [e.split("=", 1)[0] for e in args.environments]
    rows: dict[str, dict[str, float]] = {n: {"size_mb": Path(e.split("=", 1)[1]).stat().st_size / 1e6}
                                         for n, e in zip(names, args.environments)}
    with tempfile.TemporaryDirectory() as tmp:
        first = Envhost(args.envhost, args.environments, tmp, Path(tmp) / "first.log")
        for name, ms in first.load_ms().items():
            rows[name]["compile_first_ms"] = ms
        first.stop()
        host = Envhost(args.envhost, args.environments, tmp, Path(tmp) / "second.log")
        try:
            for name, ms in host.load_ms().items():
                rows[name]["compile_cached_ms"] = ms
            for name in names:
                rows[name].update(instantiate_and_memory(host, name, args.episodes))
                for clients in (1, 8):
                    rows[name][f"calls_s_{clients}"] = calls_per_second(args.mcp_load, host, name, clients, args.seconds)
        finally:
            host.stop()
    print(f"| measure | {' | '.join(names)} |")
    print(f"|---|{'---|' * len(names)}")
    labels = [("size_mb", "component size (MB)", "{:.2f}"),
              ("compile_first_ms", "load, first start, empty cache (ms)", "{:.0f}"),
              ("compile_cached_ms", "load, second start, cached (ms)", "{:.0f}"),
              ("p50_ms", "POST /episodes p50 (ms)", "{:.2f}"),
              ("p90_ms", "POST /episodes p90 (ms)", "{:.2f}"),
              ("created_kib", f"RSS per episode, created ({args.episodes}) (KiB)", "{:.0f}"),
              ("used_kib", "RSS per episode, after data/add + data/get (KiB)", "{:.0f}"),
              ("calls_s_1", "tools/call per s, 1 client (mcp_load)", "{:.0f}"),
              ("calls_s_8", "tools/call per s, 8 clients on 8 episodes (mcp_load)", "{:.0f}")]
    for key, label, fmt in labels:
        print(f"| {label} | {' | '.join(fmt.format(rows[n][key]) for n in names)} |")


if __name__ == "__main__":
    main()
