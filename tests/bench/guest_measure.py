#!/usr/bin/env python3
"""Measures guest components served by envhost, one after the other, for comparing languages.

    .venv/bin/python tests/bench/guest_measure.py --envhost BIN --mcp-load BIN \\
        --component counter-c=guests/target/wasm32-wasip2/release/counter-c.wasm \\
        --tool counter-c_add --arguments '{"by": 1}' [--component NAME=PATH --tool T --arguments A]... \\
        [--rounds 3] [--episodes 1000] [--seconds 10]

Each --component takes the --tool and --arguments that follow it. Per component and round:

  size          the component file's bytes
  start         `envhost serve NAME=PATH` until GET /ready answers 200: first with an empty
                wasmtime cache (a fresh XDG_CACHE_HOME: compiling), then again with that cache
                (cached); also the host's own `took_ms` from its "loaded" log line
  instantiate   on the cached server, --episodes times POST /episodes {"environment": NAME}
                (then DELETE), over one keep-alive connection from a raw-socket HTTP/1.1 client
                (a few µs of Python per request): the POST's round trip at the client
  memory        the server's VmRSS before and after creating --episodes episodes (kept), and
                after one data/get in each: the delta divided by --episodes
  calls         mcp_load --clients 1 and --clients 8 against the root episode, --tool with
                --arguments, --no-seed: calls/s and latency

Components alternate within each round, so load from other processes on the machine falls on
all of them alike. Prints one JSON object per component and round, then a Markdown table of the
medians over the rounds. Every server it starts is stopped when it exits.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

READY_TIMEOUT_S = 120.0


@dataclass
class Component:
    """One environment to measure and the tool call mcp_load makes."""
    name: str
    path: Path
    tool: str
    arguments: str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    """VmRSS of `pid`, in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1))


class Served:
    """`envhost serve NAME=PATH` on a free loopback port, with its own wasmtime cache."""

    def __init__(self, envhost: Path, component: Component, cache_home: Path, max_episodes: int) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix=f"guest-measure-{component.name}-", suffix=".log",
                                               delete=False)
        argv = [str(envhost), "serve", f"{component.name}={component.path}", "--host", "127.0.0.1",
                "--port", str(self.port), "--max-episodes", str(max_episodes)]
        env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "ENVIRONMENT_NAME": "", "RUST_LOG": "info"}
        started = time.perf_counter()
        self.process = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        self.ready_s = self._wait_ready(started)

    def _wait_ready(self, started: float) -> float:
        deadline = started + READY_TIMEOUT_S
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"envhost exited: {Path(self.log.name).read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base}/ready", timeout=1).status_code == 200:
                    return time.perf_counter() - started
            except httpx.TransportError:
                pass
            time.sleep(0.005)
        raise RuntimeError("envhost not ready in time")

    def took_ms(self) -> int:
        """The host's own load time, from its `loaded ... took_ms=N` log line."""
        return int(re.search(r"loaded .*took_ms=(\d+)", Path(self.log.name).read_text()).group(1))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        os.unlink(self.log.name)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class RawHttp:
    """A minimal keep-alive HTTP/1.1 client on one socket, so that timing a request measures the
    server rather than an HTTP library (an answer without Content-Length has no body)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        self.sock.sendall(head + body)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        header, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        declared = re.search(rb"(?im)^content-length:\s*(\d+)", header)
        length = int(declared.group(1)) if declared else 0
        while len(self.buffer) < length:
            self.buffer += self.sock.recv(65536)
        answer, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(header.split(b" ", 2)[1]), answer

    def close(self) -> None:
        self.sock.close()


def measure_instantiate(served: Served, name: str, n: int) -> dict:
    latencies = []
    client = RawHttp(served.port)
    body = json.dumps({"environment": name}).encode()
    try:
        for _ in range(n):
            started = time.perf_counter()
            status, answer = client.request("POST", "/episodes", body)
            latencies.append(time.perf_counter() - started)
            assert status == 201, answer
            status, answer = client.request("DELETE", f"/episodes/{json.loads(answer)['id']}")
            assert status < 300, answer
    finally:
        client.close()
    return {"n": n, "p50_us": round(percentile(latencies, 0.5) * 1e6, 1),
            "p90_us": round(percentile(latencies, 0.9) * 1e6, 1),
            "p99_us": round(percentile(latencies, 0.99) * 1e6, 1)}


def measure_memory(served: Served, name: str, n: int) -> dict:
    pid = served.process.pid
    with httpx.Client(base_url=served.base, timeout=30) as client:
        before = rss_kib(pid)
        ids = []
        for _ in range(n):
            created = client.post("/episodes", json={"environment": name})
            assert created.status_code == 201, created.text
            ids.append(created.json()["id"])
        created_kib = rss_kib(pid)
        for episode in ids:
            reply = client.post(f"/episodes/{episode}/agentenv",
                                json={"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {}})
            assert "result" in reply.json(), reply.text
        called_kib = rss_kib(pid)
        for episode in ids:
            client.delete(f"/episodes/{episode}")
    return {"n": n, "rss_before_kib": before, "rss_created_kib": created_kib, "rss_called_kib": called_kib,
            "per_episode_created_kib": round((created_kib - before) / n, 1),
            "per_episode_called_kib": round((called_kib - before) / n, 1)}


def measure_calls(mcp_load: Path, served: Served, component: Component, clients: int, seconds: float) -> dict:
    argv = [str(mcp_load), "--url", served.base, "--clients", str(clients), "--seconds", str(seconds),
            "--tool", component.tool, "--arguments", component.arguments, "--no-seed",
            "--server-pid", str(served.process.pid), "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {key: report[key] for key in ("clients", "calls", "errors", "per_s", "p50_ms", "p99_ms")} | {
        "server_cpu_s": report["server"]["cpu_s"], "client_cpu_s": report["client_cpu_s"]}


def measure(args: argparse.Namespace, component: Component, round_no: int) -> dict:
    cache_home = Path(tempfile.mkdtemp(prefix="guest-measure-cache-"))
    try:
        first = Served(args.envhost, component, cache_home, args.episodes + 8)
        first_took = first.took_ms()
        first.stop()
        served = Served(args.envhost, component, cache_home, args.episodes + 8)
        try:
            return {
                "component": component.name, "round": round_no, "load_avg_1m": os.getloadavg()[0],
                "size_bytes": component.path.stat().st_size,
                "start_first_ms": round(first.ready_s * 1e3), "loaded_first_took_ms": first_took,
                "start_cached_ms": round(served.ready_s * 1e3), "loaded_cached_took_ms": served.took_ms(),
                "instantiate": measure_instantiate(served, component.name, args.episodes),
                "memory": measure_memory(served, component.name, args.episodes),
                "calls_1": measure_calls(args.mcp_load, served, component, 1, args.seconds),
                "calls_8": measure_calls(args.mcp_load, served, component, 8, args.seconds),
            }
        finally:
            served.stop()
    finally:
        shutil.rmtree(cache_home, ignore_errors=True)


def table(results: list[dict], components: list[Component]) -> str:
    rows = [
        ("component (bytes)", lambda r: r["size_bytes"]),
        ("`serve` start, empty cache (ms to /ready)", lambda r: r["start_first_ms"]),
        ("  of which loading (took_ms)", lambda r: r["loaded_first_took_ms"]),
        ("`serve` start, cached (ms to /ready)", lambda r: r["start_cached_ms"]),
        ("  of which loading (took_ms)", lambda r: r["loaded_cached_took_ms"]),
        ("POST /episodes p50 (µs, client side)", lambda r: r["instantiate"]["p50_us"]),
        ("POST /episodes p99 (µs, client side)", lambda r: r["instantiate"]["p99_us"]),
        ("RSS per episode, created (KiB)", lambda r: r["memory"]["per_episode_created_kib"]),
        ("RSS per episode, after one data/get (KiB)", lambda r: r["memory"]["per_episode_called_kib"]),
        ("tool calls/s, 1 client", lambda r: r["calls_1"]["per_s"]),
        ("tool call p50 (ms), 1 client", lambda r: r["calls_1"]["p50_ms"]),
        ("tool calls/s, 8 clients", lambda r: r["calls_8"]["per_s"]),
        ("tool call p50 (ms), 8 clients", lambda r: r["calls_8"]["p50_ms"]),
    ]
    lines = ["| median over rounds | " + " | ".join(c.name for c in components) + " |",
             "|---|" + "---|" * len(components)]
    for label, get in rows:
        cells = [statistics.median(get(r) for r in results if r["component"] == c.name) for c in components]
        lines.append(f"| {label} | " + " | ".join(f"{v:g}" for v in cells) + " |")
    return "\n".join(lines)


def parse_args() -> tuple[argparse.Namespace, list[Component]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envhost", type=Path, required=True)
    parser.add_argument("--mcp-load", type=Path, required=True)
    parser.add_argument("--component", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--tool", action="append", required=True)
    parser.add_argument("--arguments", action="append", required=True, help="a JSON object")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    if not len(args.component) == len(args.tool) == len(args.arguments):
        parser.error("give every --component its --tool and --arguments")
    components = []
    for spec, tool, arguments in zip(args.component, args.tool, args.arguments):
        name, _, path = spec.partition("=")
        components.append(Component(name, Path(path).resolve(), tool, arguments))
    return args, components


def main() -> None:
    args, components = parse_args()
    results = []
    for round_no in range(1, args.rounds + 1):
        for component in components:
            result = measure(args, component, round_no)
            print(json.dumps(result), flush=True)
            results.append(result)
    print(table(results, components))


if __name__ == "__main__":
    sys.exit(main())
