"""Shared machinery of envhost's Python integration suite.

At session start the suite builds envhost and the guest components (fast when up to date), then
serves them on free loopback ports: `envhost serve <slack implementation>.wasm` and the reference
slack environment (`tests/reference-ports/slack/reference.py`, on the Python reference SDK) once per session, and
extra servers where a test needs isolation. Every server is killed at the end of the session.

The slack environment has several implementations (`SLACK_IMPLEMENTATIONS`: Rust, Python, JavaScript),
each a component envhost serves under the environment name `slack`. The fixtures that serve it
(`envhost_server`, `envhost_chat`) are parametrized by implementation, so every test that uses them
runs once per implementation, with the implementation's name in its id (`[slack-py]`).

Helpers here speak the wire protocol directly (httpx), so the tests can check exact answers:
`rpc` for the JSON-RPC data plane, `McpSession` for raw MCP over streamable HTTP, `reset_state` to
give a test a clean server. Tests import them with `from conftest import ...`.

Environment: ENVHOST_BIN overrides the envhost binary (the host build is then skipped).
"""
from __future__ import annotations

import asyncio
import functools
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time
import dataclasses
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
GUEST_RELEASE = REPO / "guests" / "target" / "wasm32-wasip2" / "release"
SLACK_WASM = GUEST_RELEASE / "slack.wasm"
FAULTY_WASM = GUEST_RELEASE / "faulty.wasm"
DESK_WASM = GUEST_RELEASE / "desk.wasm"
X11_DRIVER_WASM = GUEST_RELEASE / "x11_driver.wasm"
REFERENCE_SCRIPT = REPO / "tests" / "reference-ports" / "slack" / "reference.py"
RUST_GUESTS_BUILD = ("cargo", "build", "--release", "--target", "wasm32-wasip2", "--manifest-path", "guests/Cargo.toml")

CARD_PATH = "/.well-known/agent-env.json"
STATS_URI = "urn:example:slack-stats/v1"
STATS_PATH = "/agentenv/ext/example/slack-stats"
ROLE_META = "agentenv.io/role"
SESSION_META = "agentenv.io/session"
HIDDEN_META = "agentenv.io/hiddenByDefault"
MCP_ACCEPT = "application/json, text/event-stream"

STARTUP_TIMEOUT_S = 60.0
BUILD_TIMEOUT_S = 1800

RUST_GUESTS_BUILD = ("cargo", "build", "--release", "--target", "wasm32-wasip2", "--manifest-path", "guests/Cargo.toml")


# ------------------------------------------------------------------------------------- building

def build(argv: list[str]) -> None:
    """Runs a build command from the repository root; a failure ends the session with its stderr."""
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    if done.returncode != 0:
        pytest.exit(f"build failed: {' '.join(argv)}\n{done.stderr[-4000:]}", returncode=3)


@pytest.fixture(scope="session")
def envhost_bin() -> Path:
    """The envhost binary: $ENVHOST_BIN, else `cargo build --release --workspace` (as `make host`)."""
    override = os.environ.get("ENVHOST_BIN")
    if override:
        return Path(override).resolve()
    build(["cargo", "build", "--release", "--workspace"])
    return REPO / "target" / "release" / "envhost"


@pytest.fixture(scope="session")
def guests() -> dict[str, Path]:
    """The Rust guest components, built for wasm32-wasip2."""
    build(list(RUST_GUESTS_BUILD))
    return {"slack": SLACK_WASM, "faulty": FAULTY_WASM, "desk": DESK_WASM}


@dataclass(frozen=True)
class SlackImplementation:
    """One implementation of the slack environment: its component, and the command (run from the
    repository root, quick when up to date) that builds it."""
    component: Path
    build: tuple[str, ...]


#: Every implementation of the slack environment the suites run against, by name (the test id).
SLACK_IMPLEMENTATIONS: dict[str, SlackImplementation] = {
    "slack": SlackImplementation(SLACK_WASM, RUST_GUESTS_BUILD),
    "slack-py": SlackImplementation(GUEST_RELEASE / "slack-py.wasm", ("make", "guests-py")),
    "slack-js": SlackImplementation(GUEST_RELEASE / "slack-js.wasm", ("make", "guests-js")),
}

_built_implementations: set[str] = set()


def slack_component(implementation: str) -> Path:
    """The component of a slack implementation, built once per session."""
    chosen = SLACK_IMPLEMENTATIONS[implementation]
    if implementation not in _built_implementations:
        build(list(chosen.build))
        _built_implementations.add(implementation)
    return chosen.component


# ------------------------------------------------------------------------------------- servers

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """One server process on a loopback port."""
    label: str
    base_url: str
    process: subprocess.Popen
    log_path: Path
    implementation: str | None = None
    """The slack implementation it serves (a key of SLACK_IMPLEMENTATIONS), if it serves one."""

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    @property
    def mcp_url(self) -> str:
        return self.url("/mcp")

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _wait_until_ready(server: Server, probe_path: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.label} exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            if httpx.get(server.url(probe_path), timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"{server.label} not ready after {STARTUP_TIMEOUT_S}s:\n{server.log_tail()}")


@dataclass
class ServerPool:
    """Starts servers on free ports and stops every one of them at the end of the session."""
    envhost_bin: Path
    log_dir: Path
    servers: list[Server] = field(default_factory=list)
    _labels: itertools.count = field(default_factory=itertools.count)

    def _launch(self, label: str, argv: list[str], env: dict[str, str], port: int, probe_path: str,
                implementation: str | None = None) -> Server:
        label = f"{label}-{next(self._labels)}"
        log_path = self.log_dir / f"{label}.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(argv, cwd=REPO, env={**os.environ, **env}, stdout=log,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        server = Server(label, f"http://127.0.0.1:{port}", process, log_path, implementation)
        self.servers.append(server)
        _wait_until_ready(server, probe_path)
        return server

    def envhost(self, component: Path, *flags: str, env: dict[str, str] | None = None,
                label: str = "envhost") -> Server:
        """`envhost serve <component> --host 127.0.0.1 --port <free> <flags>`, ready on GET /ready."""
        port = free_port()
        argv = [str(self.envhost_bin), "serve", str(component), "--host", "127.0.0.1", "--port", str(port), *flags]
        # ENVIRONMENT_NAME from the outer environment must not leak into a server that didn't ask for it.
        env = {"ENVIRONMENT_NAME": "", **(env or {})}
        return self._launch(label, argv, env, port, "/ready")

    def slack(self, implementation: str, *flags: str, env: dict[str, str] | None = None,
              label: str = "envhost") -> Server:
        """`envhost serve slack=<component>` of a slack implementation (see `envhost`)."""
        argv_component = f"slack={slack_component(implementation)}"
        port = free_port()
        argv = [str(self.envhost_bin), "serve", argv_component, "--host", "127.0.0.1", "--port", str(port), *flags]
        env = {"ENVIRONMENT_NAME": "", **(env or {})}
        return self._launch(f"{label}-{implementation}", argv, env, port, "/ready", implementation)

    def driver(self, component: Path, env: dict[str, str] | None = None, label: str = "computer",
               extra: list[str] | None = None) -> Server:
        """`envhost serve --driver <component> <extra>` on a free port, ready when its card answers
        200."""
        port = free_port()
        argv = [str(self.envhost_bin), "serve", "--driver", str(component), "--host", "127.0.0.1", "--port", str(port),
                *(extra or [])]
        env = {"ENVIRONMENT_NAME": "", **(env or {})}
        return self._launch(label, argv, env, port, CARD_PATH)

    def driver_config(self, config: Path, label: str = "computer") -> Server:
        """`envhost serve --config <config>` of a `[driver]` table, on a free port."""
        port = free_port()
        argv = [str(self.envhost_bin), "serve", "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
        return self._launch(label, argv, {"ENVIRONMENT_NAME": ""}, port, CARD_PATH)

    def reference(self, env: dict[str, str] | None = None, label: str = "reference") -> Server:
        """The reference slack environment (Python SDK), ready when its card answers 200."""
        port = free_port()
        env = {"ENVIRONMENT_NAME": "", **(env or {}), "MCP_HOST": "127.0.0.1", "MCP_PORT": str(port)}
        return self._launch(label, [sys.executable, str(REFERENCE_SCRIPT)], env, port, CARD_PATH)

    def stop_all(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture(scope="session")
def pool(envhost_bin, guests, tmp_path_factory):
    servers = ServerPool(envhost_bin, tmp_path_factory.mktemp("server-logs"))
    yield servers
    servers.stop_all()


@pytest.fixture(scope="session")
def data_root(tmp_path_factory) -> Path:
    """The --data-root of the session's envhost slack server: file:// parts may name files here."""
    return tmp_path_factory.mktemp("data-root")


@pytest.fixture(scope="session")
def outside_root(tmp_path_factory) -> Path:
    """A directory outside every data root of the session's envhost slack server."""
    return tmp_path_factory.mktemp("outside-root")


@pytest.fixture(scope="session", params=list(SLACK_IMPLEMENTATIONS), ids=list(SLACK_IMPLEMENTATIONS))
def envhost_server(request, pool, data_root) -> Server:
    """envhost serving a slack implementation (one per param), shared by the session (use
    `envhost` for a clean one)."""
    return pool.slack(request.param, "--data-root", str(data_root), label="envhost-slack")


@pytest.fixture(scope="session")
def reference_server(pool) -> Server:
    """The reference slack environment, shared by the session (use `reference` for a clean one)."""
    return pool.reference(label="reference-slack")


@pytest.fixture(scope="session", params=list(SLACK_IMPLEMENTATIONS), ids=list(SLACK_IMPLEMENTATIONS))
def envhost_chat(request, pool) -> Server:
    """envhost serving a slack implementation (one per param) as ENVIRONMENT_NAME=chat."""
    return pool.slack(request.param, env={"ENVIRONMENT_NAME": "chat"}, label="envhost-chat")


@pytest.fixture(scope="session")
def reference_chat(pool) -> Server:
    """The reference slack environment served as ENVIRONMENT_NAME=chat."""
    return pool.reference(env={"ENVIRONMENT_NAME": "chat"}, label="reference-chat")


@pytest.fixture(params=["root", "episode"])
def envhost(request, envhost_server):
    """A clean envhost slack episode, with no data and no tool-access rules: the session server's
    root episode (reset), or a new episode of it served under /episodes/{id}/ (deleted after)."""
    if request.param == "root":
        reset_state(envhost_server)
        yield envhost_server
        return
    created = httpx.post(envhost_server.url("/episodes"), json={"environment": "slack"})
    assert created.status_code == 201, created.text
    answer = created.json()
    yield dataclasses.replace(
        envhost_server,
        label=f"{envhost_server.label}-episode",
        base_url=envhost_server.url(answer["url"].rstrip("/")),
    )
    httpx.delete(envhost_server.url(f"/episodes/{answer['id']}"))


@pytest.fixture
def reference(reference_server) -> Server:
    """The session's reference slack server with no data and no tool-access rules."""
    reset_state(reference_server)
    return reference_server


# ------------------------------------------------------------------------------------- helpers

def run(coro):
    """Runs a coroutine to completion (the reference clients are async)."""
    return asyncio.run(coro)


def rpc_post(base: Server | str, body: bytes | str | dict | list) -> httpx.Response:
    """POSTs a data-plane body (raw bytes, or JSON) to /agentenv."""
    url = f"{_base(base)}/agentenv"
    if isinstance(body, (dict, list)):
        return httpx.post(url, json=body, timeout=30)
    content = body.encode() if isinstance(body, str) else body
    return httpx.post(url, content=content, headers={"content-type": "application/json"}, timeout=30)


UNSET = object()


def rpc(base: Server | str, method: Any, params: Any = UNSET, id: Any = 1) -> dict:
    """One JSON-RPC data-plane request; answers the parsed reply (asserting HTTP 200, protocol.md#data-plane)."""
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not UNSET:
        request["params"] = params
    response = rpc_post(base, request)
    assert response.status_code == 200, response.text
    return response.json()


def data_part(channels: list | None = None, messages: list | None = None) -> dict:
    data: dict[str, Any] = {}
    if channels is not None:
        data["channels"] = channels
    if messages is not None:
        data["messages"] = messages
    return {"kind": "data", "data": data}


def seed(base: Server | str, channels: list | None = None, messages: list | None = None) -> None:
    """data/add of one data part; fails the test if the add fails."""
    reply = rpc(base, "data/add", {"parts": [data_part(channels, messages)]})
    assert reply.get("result") == {}, reply


def state(base: Server | str) -> dict:
    """The environment's data, as data/get answers it."""
    reply = rpc(base, "data/get", {})
    parts = reply["result"]["parts"]
    assert len(parts) == 1 and parts[0]["kind"] == "data", reply
    return parts[0]["data"]


def tool_access(base: Server | str, verb: str, body: Any) -> httpx.Response:
    """POST /tools/<verb> with a JSON body (or raw bytes)."""
    url = f"{_base(base)}/tools/{verb}"
    if isinstance(body, bytes):
        return httpx.post(url, content=body, headers={"content-type": "application/json"}, timeout=30)
    return httpx.post(url, json=body, timeout=30)


def reset_state(base: Server | str) -> None:
    """Empties the data and drops every tool-access rule (a `*`/`*` enable leaves the rules
    equivalent to none: `*` never shows a hidden tool, protocol.md#visibility)."""
    assert rpc(base, "data/reset", {})["result"] == {}
    response = tool_access(base, "enable", {"role": "*", "tools": "*"})
    assert response.status_code == 200, response.text


def _base(base: Server | str) -> str:
    return base.base_url if isinstance(base, Server) else base


# ------------------------------------------------------------------------------------- raw MCP

def sse_events(text: str) -> list[dict]:
    """The events of an SSE body, each as {field: value} (data lines joined with \\n)."""
    events, current = [], {}
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line:
            if current:
                events.append(current)
            current = {}
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        current[name] = f"{current[name]}\n{value}" if name == "data" and name in current else value
    if current:
        events.append(current)
    return events


def mcp_messages(response: httpx.Response) -> list[dict]:
    """The JSON-RPC messages of an MCP POST answer, SSE or JSON."""
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("text/event-stream"):
        return [json.loads(e["data"]) for e in sse_events(response.text)
                if e.get("event", "message") == "message" and e.get("data", "").strip()]
    if content_type.startswith("application/json"):
        return [response.json()]
    raise AssertionError(f"unexpected MCP content type {content_type!r}: {response.text[:300]}")


class McpSession:
    """A raw MCP streamable-HTTP session (httpx, sync): initialize on creation, then requests
    with optional per-request headers. Answers the JSON-RPC reply object of each request."""

    def __init__(self, server: Server | str, role: str | None = None, headers: dict | None = None) -> None:
        base = _base(server)
        default_headers = {"Accept": MCP_ACCEPT, **(headers or {})}
        if role is not None:
            default_headers["AgentEnv-Role"] = role
        self.client = httpx.Client(base_url=base, headers=default_headers, timeout=30)
        self._ids = itertools.count(1)
        response = self.post({"jsonrpc": "2.0", "id": next(self._ids), "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "envhost-tests", "version": "1.0"}}})
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        self.initialize_result = mcp_messages(response)[0]["result"]
        self.client.headers["mcp-session-id"] = self.session_id
        self.client.headers["mcp-protocol-version"] = self.initialize_result["protocolVersion"]
        notified = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert notified.status_code == 202, notified.text

    def post(self, message: Any, headers: dict | None = None) -> httpx.Response:
        return self.client.post("/mcp", json=message, headers=headers)

    def request(self, method: str, params: dict | None = None, headers: dict | None = None) -> dict:
        request_id = next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        response = self.post(message, headers)
        assert response.status_code == 200, f"{method}: HTTP {response.status_code} {response.text[:500]}"
        replies = [m for m in mcp_messages(response) if m.get("id") == request_id]
        assert len(replies) == 1, response.text
        return replies[0]

    def result(self, method: str, params: dict | None = None, headers: dict | None = None) -> dict:
        reply = self.request(method, params, headers)
        assert "result" in reply, reply
        return reply["result"]

    def call(self, name: str, arguments: dict | None = None, *, meta: dict | None = None,
             headers: dict | None = None) -> dict:
        """tools/call; answers the result object."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta is not None:
            params["_meta"] = meta
        return self.result("tools/call", params, headers)

    def tool_names(self, *, meta: dict | None = None, headers: dict | None = None) -> list[str]:
        params = {"_meta": meta} if meta is not None else {}
        return [t["name"] for t in self.result("tools/list", params, headers)["tools"]]

    def close(self) -> None:
        try:
            self.client.delete("/mcp")
        finally:
            self.client.close()

    def __enter__(self) -> McpSession:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def visible_tools(server: Server | str, role: str | None) -> list[str]:
    """The tool names tools/list shows a caller with this AgentEnv-Role (None: no header)."""
    with McpSession(server, role=role) as session:
        return session.tool_names()


# ------------------------------------------------------------------------------------- file server

@dataclass
class FileServer:
    """A tiny http.server on a loopback port, serving one directory."""
    directory: Path
    base_url: str

    def put(self, name: str, content: bytes | str | dict) -> str:
        """Writes a file (a dict as JSON) and answers its http:// URL."""
        if isinstance(content, dict):
            content = json.dumps(content)
        if isinstance(content, str):
            content = content.encode()
        (self.directory / name).write_bytes(content)
        return f"{self.base_url}/{name}"


@pytest.fixture(scope="session")
def file_server(tmp_path_factory):
    class QuietHandler(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    directory = tmp_path_factory.mktemp("http-files")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield FileServer(directory, f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.shutdown()
    httpd.server_close()
