#!/usr/bin/env python3
"""Measures every example guest under one envhost binary, in one run, and prints a Markdown table:
what each language costs as a component (docs/languages-measured.md).

    make guests                                                  # the five components
    cargo build --release -p envhost --bin envhost -p envhost-tests --bin mcp_load
    python3 tests/bench/languages.py [--rounds 3] [--episodes 200] [--seconds 5] [--only slack,counter-c]
                                     [--component NAME=PATH.wasm:LANGUAGE:KIND ...] [--json FILE]

Environment: ENVHOST_BIN (default target/release/envhost) and MCP_LOAD (default
target/release/mcp_load), both relative to the repository root unless absolute; --envhost and
--mcp-load override them. mcp_load needs `--arguments` and `--no-seed` for the counters.
Standard library only (any python3 >= 3.10).

Components (rows), from guests/target/wasm32-wasip2/release/:
  slack (Rust), slack-py (Python, componentize-py), slack-js (JavaScript, componentize-qjs),
  counter (Rust), counter-c (C, clang + envhost-build-c).
`--component NAME=PATH:LANGUAGE:KIND` adds one (KIND `slack` or `counter`: which tool mcp_load
calls), e.g. a SpiderMonkey build of slack-js.

Per round, the components one after the other (so load from elsewhere falls on all alike), each
served alone by `envhost serve NAME=PATH --max-episodes <max(1000, 4 x episodes)>` on a free
loopback port (a bigger pool than --episodes: slack-py's episodes take more than the pool's
average of 4 core instances each):

  size          the component file
  start         with XDG_CACHE_HOME on a fresh empty directory (wasmtime's compiled-artefact cache,
                `Cache::new(CacheConfig::new())` in crates/envhost-runtime/src/engine.rs, lives under it):
                spawn to the first 200 from GET /ready, i.e. compiling; stopped, then started again
                on that cache: loading the compiled artefact. The host's own `loaded ... took_ms`
                log line is kept in the JSON.
  memory        the server's VmRSS, then --episodes POST /episodes kept alive, VmRSS, one data/get
                into each, VmRSS; the two deltas divided by --episodes. Then they are deleted.
  instantiate   --episodes times POST /episodes (then its DELETE) over one keep-alive connection
                from a raw-socket HTTP/1.1 client: the POST's round trip seen by the client (the
                host has no instantiation metric; /metrics times calls, not creation)
  tool calls/s  mcp_load --clients 1 on the root episode, then --clients 8 --episodes 8 (one episode
                per client), --seconds S after 1 s of warm-up: a slack sends `<name>_send_message`
                on seeded episodes, a counter calls `<name>_add {"by": 1}` with --no-seed.

The table has the medians over the rounds, then a second table with the min–max of each figure.
Prints the machine (nproc, CPU, load average before and after), the date and the command. Every
server it starts is stopped when it ends; it talks to loopback only, in bounded loops.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
COMPONENTS_DIR = REPO / "guests/target/wasm32-wasip2/release"
READY_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Guest:
    """One component to measure: its serve name, file, language and shape (`slack` or `counter`)."""
    name: str
    path: Path
    language: str
    kind: str


DEFAULT_GUESTS = [
    Guest("slack", COMPONENTS_DIR / "slack.wasm", "Rust", "slack"),
    Guest("slack-py", COMPONENTS_DIR / "slack-py.wasm", "Python (componentize-py)", "slack"),
    Guest("slack-js", COMPONENTS_DIR / "slack-js.wasm", "JavaScript (componentize-qjs)", "slack"),
    Guest("counter", COMPONENTS_DIR / "counter.wasm", "Rust", "counter"),
    Guest("counter-c", COMPONENTS_DIR / "counter-c.wasm", "C (clang, envhost-build-c)", "counter"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    """VmRSS of `pid`, in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    assert found, status
    return int(found.group(1))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class RawHttp:
    """A minimal keep-alive HTTP/1.1 client on one socket, so that timing a request measures the
    server rather than an HTTP library (an answer without Content-Length has no body)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        payload = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Accept: application/json\r\nContent-Length: {len(payload)}\r\n\r\n").encode()
        self.sock.sendall(head + payload)
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buffer += chunk
        header, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        declared = re.search(rb"(?im)^content-length:\s*(\d+)", header)
        length = int(declared.group(1)) if declared else 0
        while len(self.buffer) < length:
            self.buffer += self.sock.recv(65536)
        answer, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(header.split(b" ", 2)[1]), answer

    def json(self, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        status, answer = self.request(method, path, body)
        if status != expect:
            raise RuntimeError(f"{method} {path}: {status} {answer[:500]!r}")
        return json.loads(answer) if answer else None

    def close(self) -> None:
        self.sock.close()


class Served:
    """`envhost serve NAME=PATH` on a free loopback port, with XDG_CACHE_HOME=`cache_home`; the
    time from spawn to GET /ready answering 200 is `ready_ms`."""

    def __init__(self, envhost: Path, guest: Guest, cache_home: Path, max_episodes: int) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix=f"languages-{guest.name}-", suffix=".log", delete=False)
        argv = [str(envhost), "serve", f"{guest.name}={guest.path}", "--host", "127.0.0.1",
                "--port", str(self.port), "--max-episodes", str(max_episodes)]
        env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "ENVIRONMENT_NAME": "", "RUST_LOG": "info"}
        started = time.perf_counter()
        self.process = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        try:
            self.ready_ms = self._wait_ready(started)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, started: float) -> float:
        while time.perf_counter() < started + READY_TIMEOUT_S:
            if self.process.poll() is not None:
                raise RuntimeError(f"envhost exited: {Path(self.log.name).read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.base}/ready", timeout=1) as reply:
                    if reply.status == 200:
                        return (time.perf_counter() - started) * 1e3
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.005)
        raise RuntimeError("envhost not ready in time")

    def took_ms(self) -> int | None:
        """The host's own load time, from its `loaded ... took_ms=N` log line."""
        found = re.search(r"loaded .*took_ms=(\d+)", Path(self.log.name).read_text())
        return int(found.group(1)) if found else None

    def card_name(self) -> str:
        with urllib.request.urlopen(f"{self.base}/.well-known/agent-env.json", timeout=10) as reply:
            return json.load(reply)["name"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        Path(self.log.name).unlink(missing_ok=True)


def measure_memory(served: Served, name: str, n: int) -> dict[str, float]:
    """RSS growth per episode: over `n` episodes created, then after one data/get in each."""
    pid = served.process.pid
    client = RawHttp(served.port)
    try:
        before = rss_kib(pid)
        ids = [client.json("POST", "/episodes", {"environment": name}, expect=201)["id"] for _ in range(n)]
        created = rss_kib(pid)
        for episode in ids:
            reply = client.json("POST", f"/episodes/{episode}/agentenv",
                                {"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {}})
            assert "result" in reply, reply
        called = rss_kib(pid)
        for episode in ids:
            client.request("DELETE", f"/episodes/{episode}")
    finally:
        client.close()
    return {"rss_created_kib": (created - before) / n, "rss_called_kib": (called - before) / n}


def measure_instantiate(served: Served, name: str, n: int) -> dict[str, float]:
    """Client-side round trip of POST /episodes, each followed by its DELETE."""
    client = RawHttp(served.port)
    latencies = []
    try:
        for _ in range(n):
            started = time.perf_counter()
            status, answer = client.request("POST", "/episodes", {"environment": name})
            latencies.append((time.perf_counter() - started) * 1e6)
            assert status == 201, answer
            client.request("DELETE", f"/episodes/{json.loads(answer)['id']}")
    finally:
        client.close()
    return {"instantiate_p50_us": statistics.median(latencies), "instantiate_p90_us": percentile(latencies, 0.9)}


def measure_calls(mcp_load: Path, served: Served, guest: Guest, clients: int, seconds: float) -> dict[str, Any]:
    """mcp_load's calls/s: 1 client on the root episode, or `clients` clients on as many episodes."""
    card = served.card_name()
    argv = [str(mcp_load), "--url", served.base, "--clients", str(clients), "--seconds", str(seconds),
            "--server-pid", str(served.process.pid), "--env-name", card, "--json"]
    if clients > 1:
        argv += ["--episodes", str(clients), "--environment", guest.name]
    if guest.kind == "counter":
        argv += ["--tool", f"{card}_add", "--arguments", '{"by": 1}', "--no-seed"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)}: {done.stderr[-2000:]}{done.stdout[-2000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report["errors"]:
        raise RuntimeError(f"{guest.name}: {report['errors']} failed calls: {report.get('failures')}")
    return {"per_s": report["per_s"], "p50_ms": report["p50_ms"], "server_cpu_s": report["server"]["cpu_s"],
            "client_cpu_s": report["client_cpu_s"]}


def measure(args: argparse.Namespace, guest: Guest, round_no: int) -> dict[str, Any]:
    """One round of every figure for `guest`, each server on a fresh compiled-artefact cache."""
    cache_home = Path(tempfile.mkdtemp(prefix="languages-cache-"))
    # The pool holds on average 4 core instances per episode; slack-py's component has more, so
    # the pool is sized well beyond --episodes (the host's default, 1000, at least).
    max_episodes = max(1000, 4 * args.episodes)
    try:
        load_before = os.getloadavg()[0]
        first = Served(args.envhost, guest, cache_home, max_episodes)
        first_took = first.took_ms()
        first.stop()
        served = Served(args.envhost, guest, cache_home, max_episodes)
        try:
            result: dict[str, Any] = {
                "component": guest.name, "round": round_no, "load_avg_1m": load_before,
                "size_bytes": guest.path.stat().st_size,
                "start_first_ms": first.ready_ms, "took_first_ms": first_took,
                "start_cached_ms": served.ready_ms, "took_cached_ms": served.took_ms(),
            }
            result |= measure_memory(served, guest.name, args.episodes)
            result |= measure_instantiate(served, guest.name, args.episodes)
            result["calls_1"] = measure_calls(args.mcp_load, served, guest, 1, args.seconds)
            result["calls_8"] = measure_calls(args.mcp_load, served, guest, 8, args.seconds)
            return result
        finally:
            served.stop()
    finally:
        shutil.rmtree(cache_home, ignore_errors=True)


def size_text(size: float) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.0f} KiB"


def start_text(ms: float) -> str:
    return f"{ms / 1e3:.1f} s" if ms >= 10_000 else f"{ms:,.0f} ms"


# (column header, figure of one round, format of the median)
COLUMNS: list[tuple[str, Callable[[dict[str, Any]], float], Callable[[float], str]]] = [
    ("size", lambda r: r["size_bytes"], size_text),
    ("start, empty cache (compile)", lambda r: r["start_first_ms"], start_text),
    ("start, cached", lambda r: r["start_cached_ms"], start_text),
    ("POST /episodes p50", lambda r: r["instantiate_p50_us"], lambda v: f"{v:,.0f} µs"),
    ("RSS/episode, created", lambda r: r["rss_created_kib"], lambda v: f"{v:,.0f} KiB"),
    ("RSS/episode, after 1 data/get", lambda r: r["rss_called_kib"], lambda v: f"{v:,.0f} KiB"),
    ("tool calls/s, 1 client", lambda r: r["calls_1"]["per_s"], lambda v: f"{v:,.0f}"),
    ("tool calls/s, 8 clients", lambda r: r["calls_8"]["per_s"], lambda v: f"{v:,.0f}"),
]


def tables(results: list[dict[str, Any]], guests: list[Guest]) -> str:
    """The medians over the rounds, then each figure's min–max."""
    head = "| component | language | " + " | ".join(c[0] for c in COLUMNS) + " |"
    rule = "|---|---|" + "---:|" * len(COLUMNS)
    medians, spreads = [head, rule], ["| component | " + " | ".join(c[0] for c in COLUMNS[1:]) + " |",
                                      "|---|" + "---:|" * (len(COLUMNS) - 1)]
    for guest in guests:
        rounds = [r for r in results if r["component"] == guest.name]
        medians.append(f"| {guest.name} | {guest.language} | "
                       + " | ".join(fmt(statistics.median(get(r) for r in rounds)) for _, get, fmt in COLUMNS) + " |")
        spreads.append(f"| {guest.name} | " + " | ".join(
            f"{fmt(min(get(r) for r in rounds))} – {fmt(max(get(r) for r in rounds))}"
            for _, get, fmt in COLUMNS[1:]) + " |")
    loads = ", ".join(f"{max(r['load_avg_1m'] for r in results if r['round'] == n):.1f}"
                      for n in sorted({r["round"] for r in results}))
    return ("\n".join(medians) + "\n\nMin – max over the rounds (highest 1-minute load average of each "
            f"round: {loads}):\n\n" + "\n".join(spreads))


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem_kib = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    return f"{os.cpu_count()} CPUs ({cpu}), {mem_kib / 2**20:.0f} GiB, {platform.system()} {platform.release()}"


def load_text() -> str:
    return " / ".join(f"{v:.2f}" for v in os.getloadavg())


def repo_path(value: str) -> Path:
    path = Path(value)
    return path if path.is_absolute() else REPO / path


def parse_args() -> tuple[argparse.Namespace, list[Guest]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envhost", type=repo_path, default=repo_path(os.environ.get("ENVHOST_BIN", "target/release/envhost")))
    parser.add_argument("--mcp-load", type=repo_path, default=repo_path(os.environ.get("MCP_LOAD", "target/release/mcp_load")))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=200, help="episodes for memory and instantiate")
    parser.add_argument("--seconds", type=float, default=5.0, help="mcp_load's measured window")
    parser.add_argument("--only", help="comma-separated component names")
    parser.add_argument("--component", action="append", default=[], help="NAME=PATH.wasm:LANGUAGE:KIND (slack|counter)")
    parser.add_argument("--json", type=Path, help="also write every round's figures here")
    args = parser.parse_args()
    guests = list(DEFAULT_GUESTS)
    for spec in args.component:
        name, _, rest = spec.partition("=")
        path, language, kind = rest.rsplit(":", 2)
        if kind not in ("slack", "counter"):
            parser.error(f"--component {spec}: KIND is slack or counter")
        guests.append(Guest(name, Path(path).resolve(), language, kind))
    if args.only:
        wanted = args.only.split(",")
        guests = [g for g in guests if g.name in wanted]
    for path in [args.envhost, args.mcp_load, *(g.path for g in guests)]:
        if not path.is_file():
            parser.error(f"{path} is missing (make guests; cargo build --release)")
    return args, guests


def main() -> None:
    # SIGTERM unwinds like Ctrl-C, so the servers and caches of the current round are cleaned up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args, guests = parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = load_text()
    results = []
    for round_no in range(1, args.rounds + 1):
        for guest in guests:
            result = measure(args, guest, round_no)
            print(json.dumps(result), file=sys.stderr, flush=True)
            results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    minutes = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds() / 60
    command = shlex.join(["tests/bench/languages.py", *sys.argv[1:]])
    print(f"Measured {started:%Y-%m-%d %H:%M} UTC in {minutes:.0f} min by `{command}`")
    print(f"on {machine()}; load average (1/5/15 min) {load_before} before, {load_text()} after.")
    print(f"envhost: {args.envhost}; mcp_load: {args.mcp_load}. Medians of {args.rounds} rounds; "
          f"{args.episodes} episodes for memory and instantiate; mcp_load windows of {args.seconds:g} s.\n")
    print(tables(results, guests))


if __name__ == "__main__":
    main()
