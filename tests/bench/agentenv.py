#!/usr/bin/env python3
"""agent-env on envhost, measured (docs/agent-env.md, BENCHMARKS.md): environment deploys through
the agentenv-envhost plugin against agent-env's built-in `server` provider running the Python
reference slack, and many A2A tasks at once on one host.

    make guests-rust host-all test-agentenv      # the components, the binaries, target/agentenv-venv
    target/agentenv-venv/bin/python tests/bench/agentenv.py [--rounds 5] [--tasks 1000]
        [--deployments 10000] [--json FILE]

ENVHOST_BIN names the binary (default target/release/envhost). Everything runs on loopback.

deploy        per round, one after the other: `EnvhostEnvironmentProvider.deploy` (a slack episode
              on a running envhost) and agent-env's `EnvironmentServerProvider.deploy` on a
              sandbox provider that starts tests/reference-ports/slack/reference.py as a process (what
              a container would run, without the container), each timed from the call to the
              first `slack_list_channels` answered over MCP (the official client), then torn
              down. Medians of the rounds, min–max, and reference ÷ envhost.
tasks         --tasks deployments of tool-agent, each with its own slack episode bound by
              mcp-config; then one `message/send` each, `blocking: false`, all sent at once
              (200 connections), and `tasks/get` polled every 250 ms until every task is
              terminal: wall time from the first send, tasks/s, how many completed, and the
              server's CPU time (/proc) over the round divided by the tasks. The
              model is `agent_bench model --tools 1` (AGENT_BENCH, default
              target/release/agent_bench): it answers at once from a process of its own, one
              `slack_send_message` call and then `Done.`, so a task is 2 model calls and 1 tool
              call.
idle memory   the server's VmRSS before and after --deployments more deployments, each with an
              mcp-config added and nothing run: the difference divided by their number.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ROOT / "guests/target/wasm32-wasip2/release"
REFERENCE = ROOT / "tests/reference-ports/slack/reference.py"
TOKEN = secrets.token_hex(16)
#: How often a task is polled with tasks/get (agent-env polls every 2 s).
POLL_S = 0.25
GENERAL = [{"kind": "data", "data": {"channels": [{"name": "general"}]}}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the process exited")
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"{url} did not answer")


def cpu_s(pid: int) -> float:
    """The user and system CPU time of process `pid`, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def first_tool_call(mcp_url: str) -> None:
    async with streamable_http_client(mcp_url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            answer = await session.call_tool("slack_list_channels", {})
            assert not answer.isError, answer


def process_sandbox_provider():
    """A sandbox provider (agent-env's container shape) whose containers are processes of the
    reference slack server: what agent-env's `server` provider deploys, without Docker."""
    from agent_env.providers.sandbox_providers.sandbox import Sandbox
    from agent_env.providers.sandbox_providers.sandbox_provider import Accepts, SandboxProvider

    class ProcessSandbox(Sandbox):
        type = "process"

        def __init__(self, process: subprocess.Popen, port: int, exposed: int) -> None:
            self.mode = "container"
            self.sandbox_id = str(process.pid)
            self.tunnel_urls = {exposed: f"http://127.0.0.1:{port}"}
            self.vnc_url = None
            self.network_policy = None
            self._process = process

        async def terminate(self) -> None:
            self._process.terminate()
            self._process.wait()

    class ProcessSandboxProvider(SandboxProvider):
        CONTAINER_ACCEPTS = Accepts.NAME_OR_CONTEXT
        SANDBOX_ACCEPTS = Accepts.NAME_OR_CONTEXT
        ON_THIS_MACHINE = True

        async def create_sandbox(self, *, image_name: str, port: int, env: dict[str, str], **_: Any):
            own = free_port()
            variables = {**os.environ, **env, "MCP_HOST": "127.0.0.1", "MCP_PORT": str(own)}
            process = subprocess.Popen([sys.executable, str(REFERENCE)], env=variables,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return ProcessSandbox(process, own, port)

        async def create_container(self, *, image_name: str, port: int, env: dict[str, str], **options: Any):
            return await self.create_sandbox(image_name=image_name, port=port, env=env)

        async def get_sandbox(self, sandbox_id: str):
            raise NotImplementedError

    return ProcessSandboxProvider()


async def deploy_rounds(rounds: int) -> dict[str, list[float]]:
    from agent_env.providers.env_providers.env_server_provider import EnvironmentServerProvider
    from agentenv_envhost.env_provider import EnvhostEnvironmentProvider
    from agentenv_envhost.sandbox_provider import EnvhostSandbox
    from agentenv_envhost.server import Server

    image = SimpleNamespace(image_name="reference-slack", buildable=True, image_digest=None)
    env = SimpleNamespace(id="slack", version=1, environment_name="slack", docker_image_artifact=image)
    times: dict[str, list[float]] = {"envhost": [], "reference": []}
    for _ in range(rounds):
        start = time.perf_counter()
        deployed = await EnvhostEnvironmentProvider().deploy(env, None, ttl_seconds=600)
        await first_tool_call(deployed.mcp_url)
        times["envhost"].append(time.perf_counter() - start)
        await EnvhostSandbox(deployed.sandbox_id, Server.configured()).terminate()

        provider = EnvironmentServerProvider()
        start = time.perf_counter()
        deployed = await provider.deploy(env, process_sandbox_provider(), ttl_seconds=600)
        await first_tool_call(deployed.mcp_url)
        times["reference"].append(time.perf_counter() - start)
        for sandbox in provider._container_sandboxes:
            await sandbox.terminate()
    return times


async def deployments(client: httpx.AsyncClient, url: str, count: int) -> list[str]:
    """`count` deployments of tool-agent, each with its own slack episode bound: their base URLs."""
    semaphore = asyncio.Semaphore(64)

    async def one() -> str:
        async with semaphore:
            episode = (await client.post("/episodes", json={"environment": "slack", "parts": GENERAL})).json()
            base = url + (await client.post("/agents/tool-agent/deployments")).json()["url"]
            added = await client.post(f"{base}/ext/mcp-config", json={"url": url + episode["mcp_url"], "name": "slack"})
            added.raise_for_status()
            return base

    return await asyncio.gather(*(one() for _ in range(count)))


async def tasks_round(client: httpx.AsyncClient, bases: list[str], pid: int) -> dict[str, float]:
    async def send(base: str) -> tuple[str, str]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
            "message": {"messageId": uuid.uuid4().hex, "role": "user", "contextId": uuid.uuid4().hex,
                        "parts": [{"kind": "text", "text": "The build is green"}]},
            "configuration": {"blocking": False}}}
        answer = (await client.post(f"{base}/a2a", json=body)).json()
        return base, answer["result"]["id"]

    async def finished(base: str, task_id: str) -> str:
        while True:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
            state = (await client.post(f"{base}/a2a", json=body)).json()["result"]["status"]["state"]
            if state in ("completed", "failed", "canceled"):
                return state
            await asyncio.sleep(POLL_S)

    start, cpu = time.perf_counter(), cpu_s(pid)
    sent = await asyncio.gather(*(send(b) for b in bases))
    states = await asyncio.gather(*(finished(b, t) for b, t in sent))
    wall = time.perf_counter() - start
    return {"wall_s": wall, "tasks_per_s": len(bases) / wall,
            "host_cpu_per_task_ms": (cpu_s(pid) - cpu) * 1000 / len(bases),
            "completed": sum(s == "completed" for s in states)}


def summary(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ms ({min(values) * 1000:.1f}–{max(values) * 1000:.1f})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--deployments", type=int, default=10000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    binary = os.environ.get("ENVHOST_BIN", str(ROOT / "target/release/envhost"))
    port = free_port()
    agent_bench = os.environ.get("AGENT_BENCH", str(ROOT / "target/release/agent_bench"))
    model = subprocess.Popen([agent_bench, "model", "--tools", "1"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    model_port = int(model.stdout.readline())
    token_file = Path(f"/tmp/envhost-bench-token-{os.getpid()}")
    token_file.write_text(TOKEN)
    server = subprocess.Popen(
        [binary, "serve", f"slack={COMPONENTS / 'slack.wasm'}", "--agent", f"tool-agent={COMPONENTS / 'tool_agent.wasm'}",
         "--model-url", f"http://127.0.0.1:{model_port}/v1", "--port", str(port), "--control-token-file", str(token_file),
         "--max-episodes", str(args.tasks + 100)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    os.environ.update(ENVHOST_URL=url, ENVHOST_CONTROL_TOKEN=TOKEN)
    results: dict[str, Any] = {"load_before": os.getloadavg()}
    try:
        wait_until(f"{url}/ready", server)
        deploys = await deploy_rounds(args.rounds)
        results["deploy"] = deploys
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"},
                                     limits=limits, timeout=300) as client:
            bases = await deployments(client, url, args.tasks)
            rounds = [await tasks_round(client, bases, server.pid) for _ in range(args.rounds)]
            results["tasks"] = rounds
            before = rss_kib(server.pid)
            semaphore = asyncio.Semaphore(64)

            async def idle() -> None:
                async with semaphore:
                    base = url + (await client.post("/agents/tool-agent/deployments")).json()["url"]
                    await client.post(f"{base}/ext/mcp-config", json={"url": f"{url}/mcp", "name": "slack"})

            await asyncio.gather(*(idle() for _ in range(args.deployments)))
            after = rss_kib(server.pid)
            results["idle"] = {"rss_before_kib": before, "rss_after_kib": after,
                               "per_deployment_bytes": (after - before) * 1024 / args.deployments}
    finally:
        server.terminate()
        model.terminate()
        token_file.unlink(missing_ok=True)
    results["load_after"] = os.getloadavg()

    ratio = [r / e for r, e in zip(deploys["reference"], deploys["envhost"])]
    print(f"machine: {os.cpu_count()} cores, load {results['load_before'][0]:.2f} before, "
          f"{results['load_after'][0]:.2f} after; {args.rounds} rounds")
    print()
    print("| measure | envhost | reference | reference ÷ envhost |")
    print("|---|---|---|---|")
    print(f"| deploy to first tool call | {summary(deploys['envhost'])} | {summary(deploys['reference'])} | "
          f"{statistics.median(ratio):.0f}× ({min(ratio):.0f}–{max(ratio):.0f}) |")
    walls = [r["wall_s"] for r in rounds]
    rates = [r["tasks_per_s"] for r in rounds]
    cpus = [r["host_cpu_per_task_ms"] for r in rounds]
    print(f"| {args.tasks} concurrent A2A tasks, wall | {statistics.median(walls):.2f} s "
          f"({min(walls):.2f}–{max(walls):.2f}); {statistics.median(rates):.0f} tasks/s; "
          f"completed {min(r['completed'] for r in rounds)}/{args.tasks} | | |")
    print(f"| host CPU per task (send, 2 model calls, 1 tool call, polls) | {statistics.median(cpus):.2f} ms "
          f"({min(cpus):.2f}–{max(cpus):.2f}) | | |")
    idle = results["idle"]
    print(f"| memory per idle deployment ({args.deployments}) | {idle['per_deployment_bytes'] / 1024:.1f} KiB "
          f"(RSS {idle['rss_before_kib'] / 1024:.0f} → {idle['rss_after_kib'] / 1024:.0f} MiB) | | |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
