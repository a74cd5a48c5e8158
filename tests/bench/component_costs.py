"""What one guest component costs under envhost: size, first and cached compile, instantiate,
memory per episode and tool calls per second. The figures of docs/languages-measured-js.md.

    .venv/bin/python tests/bench/component_costs.py NAME=PATH.wasm [NAME=PATH.wasm ...]

Each component is served alone, `envhost serve NAME=PATH.wasm`, on a free loopback port:
- compile: started twice with one fresh wasmtime cache (XDG_CACHE_HOME), so the first start
  compiles and the second loads the cached artefact; the host's `loaded ... took_ms` log line
  and the wall time from spawn to `GET /ready` answering 200;
- instantiate: `POST /episodes {"environment": NAME}` timed from the client, EPISODES times
  (p50, p99); then the first `data/get` on each new episode (p50);
- memory per episode: the server's VmRSS before and after creating EPISODES more episodes, each
  given one `data/add` and one `data/get` (so its instance has run), divided by EPISODES;
- tool calls/s: `mcp_load --clients 8 --seconds SECONDS --server-pid PID` on the root episode
  (it seeds the episode and calls `NAME_send_message`), and with `--episodes 8`.

Environment: ENVHOST_BIN (default target/release/envhost), MCP_LOAD (default mcp_load on PATH),
EPISODES (default 200), SECONDS (default 10). Prints one Markdown table row per component and the
raw figures as JSON.
"""
from __future__ import annotations

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
from pathlib import Path

import httpx

ENVHOST = os.environ.get("ENVHOST_BIN", "target/release/envhost")
MCP_LOAD = os.environ.get("MCP_LOAD", "mcp_load")
EPISODES = int(os.environ.get("EPISODES", "200"))
SECONDS = int(os.environ.get("SECONDS", "10"))
SEED = {"kind": "data", "data": {"channels": [{"name": "general"}], "messages": []}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Served:
    """`envhost serve NAME=PATH` on a free port with the given cache home, until stopped."""

    def __init__(self, spec: str, cache_home: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="envhost-", suffix=".log", delete=False)
        started = time.monotonic()
        self.process = subprocess.Popen(
            [ENVHOST, "serve", spec, "--host", "127.0.0.1", "--port", str(self.port)],
            env={**os.environ, "XDG_CACHE_HOME": cache_home, "ENVIRONMENT_NAME": ""},
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"envhost exited: {Path(self.log.name).read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base}/ready", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.01)
        self.ready_s = time.monotonic() - started
        found = re.search(r"loaded environment=\S+ took_ms=(\d+)", Path(self.log.name).read_text())
        self.loaded_ms = int(found.group(1)) if found else None

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        os.unlink(self.log.name)


def episodes(server: Served, name: str) -> dict:
    create_ms, first_get_ms = [], []
    with httpx.Client(base_url=server.base, timeout=60) as client:
        for _ in range(EPISODES):
            started = time.perf_counter()
            created = client.post("/episodes", json={"environment": name})
            create_ms.append((time.perf_counter() - started) * 1000)
            assert created.status_code == 201, created.text
            url = created.json()["url"].rstrip("/")
            started = time.perf_counter()
            got = client.post(f"{url}/agentenv", json={"jsonrpc": "2.0", "id": 1, "method": "data/get"})
            first_get_ms.append((time.perf_counter() - started) * 1000)
            assert "result" in got.json(), got.text
        for listed in client.get("/episodes").json()["episodes"]:
            client.delete(f"/episodes/{listed['id']}")
        time.sleep(0.5)
        before = rss_kib(server.process.pid)
        for _ in range(EPISODES):
            url = client.post("/episodes", json={"environment": name}).json()["url"].rstrip("/")
            for method, params in (("data/add", {"parts": [SEED]}), ("data/get", {})):
                reply = client.post(f"{url}/agentenv", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
                assert "result" in reply.json(), reply.text
        time.sleep(0.5)
        after = rss_kib(server.process.pid)
    return {
        "instantiate_p50_ms": statistics.median(create_ms),
        "instantiate_p99_ms": percentile(create_ms, 99),
        "first_call_p50_ms": statistics.median(first_get_ms),
        "rss_per_episode_kib": (after - before) / EPISODES,
    }


def calls_per_second(server: Served, extra: list[str]) -> dict:
    done = subprocess.run([MCP_LOAD, "--url", server.base, "--clients", "8", "--seconds", str(SECONDS),
                           "--server-pid", str(server.process.pid), "--json", *extra],
                          capture_output=True, text=True, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["errors"] == 0, report["failures"]
    return {key: report[key] for key in ("per_s", "p50_ms", "p99_ms")} | {"server_cpu_s": report["server"]["cpu_s"]}


def measure(spec: str) -> dict:
    name, _, path = spec.partition("=")
    cache_home = tempfile.mkdtemp(prefix="envhost-cache-")
    try:
        first = Served(spec, cache_home)
        first.stop()
        cached = Served(spec, cache_home)
        try:
            figures = {
                "name": name,
                "size_bytes": Path(path).stat().st_size,
                "first_compile_loaded_ms": first.loaded_ms,
                "first_ready_s": round(first.ready_s, 2),
                "cached_loaded_ms": cached.loaded_ms,
                "cached_ready_s": round(cached.ready_s, 3),
                **episodes(cached, name),
                "calls_root": calls_per_second(cached, []),
                "calls_8_episodes": calls_per_second(cached, ["--episodes", "8"]),
            }
        finally:
            cached.stop()
    finally:
        shutil.rmtree(cache_home, ignore_errors=True)
    return figures


def main() -> None:
    results = [measure(spec) for spec in sys.argv[1:]]
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
