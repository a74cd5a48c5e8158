"""A local `envhost serve` the plugin starts itself when its settings name components and no
server URL: `[plugins.agentenv-envhost] components = {slack = "slack.wasm"}`, with `agents`,
`model_url`, `envhost` (the binary; default `envhost` on PATH, which the `envhost` wheel
installs) and `serve_args` (more options). It listens on a free loopback port, guarded by a
fresh operator token, and lives as long as the process that started it (agent-env's)."""
from __future__ import annotations

import atexit
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

#: How long a local server may take to answer /ready (it compiles the components first).
READY_TIMEOUT_S = 180

_lock = threading.Lock()
_started: tuple[str, str] | None = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _argv(settings: dict[str, Any], base: Path, port: int, token_file: Path) -> list[str]:
    binary = settings.get("envhost") or shutil.which("envhost")
    if not binary:
        raise RuntimeError("no envhost binary: install the envhost wheel, or set [plugins.agentenv-envhost] envhost")
    path = lambda p: str(base / Path(str(p)).expanduser())  # noqa: E731
    argv = [str(binary), "serve"]
    argv += [f"{name}={path(file)}" for name, file in settings["components"].items()]
    for name, file in (settings.get("agents") or {}).items():
        argv += ["--agent", f"{name}={path(file)}"]
    if settings.get("model_url"):
        argv += ["--model-url", str(settings["model_url"])]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--control-token-file", str(token_file)]
    return argv + [str(a) for a in settings.get("serve_args") or []]


def started(settings: dict[str, Any], base: Path) -> tuple[str, str]:
    """The URL and token of this process's local server, started on first use from `settings`
    (paths relative to `base`); raises `RuntimeError` with its log when it does not start."""
    global _started
    with _lock:
        if _started is not None:
            return _started
        folder = Path(tempfile.mkdtemp(prefix="agentenv-envhost-"))
        token = secrets.token_hex(32)
        token_file = folder / "token"
        token_file.write_text(token)
        token_file.chmod(0o600)
        port = _free_port()
        log = folder / "envhost.log"
        process = subprocess.Popen(_argv(settings, base, port, token_file), stdout=log.open("w"),
                                   stderr=subprocess.STDOUT, env=os.environ.copy())
        atexit.register(process.terminate)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"envhost exited ({process.returncode}): {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/ready", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                process.terminate()
                raise RuntimeError(f"envhost did not get ready in {READY_TIMEOUT_S} s: {log.read_text()[-2000:]}")
            time.sleep(0.05)
        _started = (url, token)
        return _started
