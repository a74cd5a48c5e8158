"""Fixtures of the agent-env suite: one envhost server (slack, guests/tool-agent as the agent
`tool-agent`, an operator token) whose model is tools/scripted-model.py, both on free loopback
ports, an HTTPS object store on loopback (object_store.py), and a scratch agent-env home. ENVHOST_BIN names the envhost binary (default
target/release/envhost); the components come from guests/target (make guests-rust)."""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from object_store import ObjectStore

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ROOT / "guests/target/wasm32-wasip2/release"
BUNDLES = ROOT / "examples/agent-env"
TOKEN = secrets.token_hex(16)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited: {log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer: {log.read_text()[-3000:]}")


@dataclass
class Envhost:
    """A running envhost server: its base URL and its operator's headers."""

    url: str
    model_url: str
    log: Path

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKEN}"}

    def control(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=60)

    def deploy(self, agent: str = "tool-agent") -> str:
        """A new deployment of `agent`: its base URL."""
        with self.control() as client:
            created = client.post(f"/agents/{agent}/deployments")
        assert created.status_code == 201, created.text
        return self.url + created.json()["url"]

    def episode(self) -> dict:
        """A new slack episode with #general."""
        with self.control() as client:
            created = client.post("/episodes", json={"environment": "slack", "parts": [
                {"kind": "data", "data": {"channels": [{"name": "general"}]}}]})
        assert created.status_code == 201, created.text
        return created.json()


def start(argv: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(argv, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})


@pytest.fixture(scope="session")
def model(tmp_path_factory) -> str:
    """tools/scripted-model.py on a free port: its `/v1` base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("model") / "model.log"
    process = start([sys.executable, str(ROOT / "tools/scripted-model.py"), "--port", str(port)], log)
    url = f"http://127.0.0.1:{port}"
    wait_until(f"{url}/v1/models", process, log)
    yield f"{url}/v1"
    process.terminate()
    process.wait()


@pytest.fixture(scope="session")
def store(tmp_path_factory) -> ObjectStore:
    """An HTTPS object store on loopback whose authority envhost trusts."""
    running = ObjectStore(tmp_path_factory.mktemp("store"))
    yield running
    running.stop()


@pytest.fixture(scope="session")
def envhost(model, store, tmp_path_factory) -> Envhost:
    """envhost serving slack and the agent tool-agent, guarded by an operator token, trusting
    the object store's authority."""
    binary = os.environ.get("ENVHOST_BIN", str(ROOT / "target/release/envhost"))
    port = free_port()
    folder = tmp_path_factory.mktemp("envhost")
    log = folder / "envhost.log"
    token_file = folder / "token"
    token_file.write_text(TOKEN)
    process = start([binary, "serve", f"slack={COMPONENTS / 'slack.wasm'}",
                     "--agent", f"tool-agent={COMPONENTS / 'tool_agent.wasm'}",
                     "--model-url", model, "--port", str(port),
                     "--control-token-file", str(token_file), "--ca-file", str(store.ca_file)], log)
    url = f"http://127.0.0.1:{port}"
    wait_until(f"{url}/ready", process, log)
    yield Envhost(url, model, log)
    process.terminate()
    process.wait()


@pytest.fixture
def agent_env_home(tmp_path, envhost, monkeypatch) -> dict[str, str]:
    """The environment agent-env runs in: a scratch home, the plugin pointed at `envhost`."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "ENVHOST_URL": envhost.url, "ENVHOST_CONTROL_TOKEN": TOKEN,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
