"""The wheel from a clean venv (make wheel): installed with pip, its README snippet calls a slack
tool, and its `envhost` command serves the card."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, SLACK

WHEELS = sorted((REPO / "dist").glob("envhost-*.whl"))
SNIPPET = (REPO / "python" / "README.md").read_text().split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    assert WHEELS, "no wheel in dist/: make wheel"
    where = tmp_path_factory.mktemp("clean") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    subprocess.run([str(where / "bin" / "pip"), "install", "--quiet", "--no-index", str(WHEELS[-1])], check=True)
    return where


def test_the_readme_snippet_runs_from_the_wheel(venv, tmp_path):
    (tmp_path / "slack.wasm").symlink_to(SLACK)
    done = subprocess.run([str(venv / "bin" / "python"), "-c", SNIPPET], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "slack_send_message" in done.stdout and "{'result': 'ok'}" in done.stdout, done.stdout


def test_the_wheels_envhost_command_serves_the_card(venv):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(venv / "bin" / "envhost"), "serve", str(SLACK), "--port", str(port)],
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "RUST_LOG": "warn"})
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/.well-known/agent-env.json") as answer:
                    assert b'"name":"slack"' in answer.read().replace(b" ", b"")
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()
                time.sleep(0.2)
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
    assert "Traceback" not in server.stderr.read()
    bad = subprocess.run([str(venv / "bin" / "envhost"), "serve"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stderr.startswith("error: name at least one environment"), bad.stderr
