"""The server process: it stops on SIGTERM, as container runtimes and service managers stop it,
even while a client holds a standalone MCP stream open, and it serves HTTP from the threads
`--http-threads` asks for."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

import httpx

from conftest import MCP_ACCEPT, SLACK_WASM, McpSession

# The server's SHUTDOWN_GRACE is 5 s; a server that waits for the stream's client never exits.
EXIT_TIMEOUT_S = 15


def test_sigterm_stops_the_server_with_a_stream_open(pool):
    server = pool.envhost(SLACK_WASM, label="envhost-sigterm")
    session = McpSession(server)
    opened = threading.Event()

    def hold_stream() -> None:
        headers = {"Accept": MCP_ACCEPT, "mcp-session-id": session.session_id}
        try:
            with httpx.stream("GET", server.mcp_url, headers=headers, timeout=60) as response:
                assert response.status_code == 200
                opened.set()
                for _ in response.iter_bytes():
                    pass
        except httpx.TransportError:
            pass

    holder = threading.Thread(target=hold_stream, daemon=True)
    holder.start()
    assert opened.wait(10), "the standalone stream did not open"

    server.process.send_signal(signal.SIGTERM)
    try:
        code = server.process.wait(timeout=EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        server.process.kill()
        raise AssertionError(f"still running {EXIT_TIMEOUT_S}s after SIGTERM:\n{server.log_tail()}")
    assert code == 0, server.log_tail()
    assert "shutting down" in server.log_tail()


def test_http_threads_each_serve_their_connections(pool):
    """`--http-threads 3` starts three HTTP threads, and eight keep-alive clients posting at once,
    each to an episode of its own, all get their own data back."""
    server = pool.envhost(SLACK_WASM, "--http-threads", "3", label="envhost-http-threads")
    names = [Path(task, "comm").read_text().strip() for task in Path(f"/proc/{server.process.pid}/task").iterdir()]
    assert names.count("envhost-http") == 3, names
    failures: list[str] = []

    def client(n: int) -> None:
        try:
            with httpx.Client(base_url=server.base_url, timeout=30) as http:
                created = http.post("/episodes", json={"environment": "slack"})
                assert created.status_code == 201, created.text
                url = created.json()["url"]
                for i in range(20):
                    data = {"channels": [{"name": "c"}], "messages": [{"channel": "c", "text": f"{n}-{i}"}]}
                    add = {"jsonrpc": "2.0", "id": i, "method": "data/add",
                           "params": {"parts": [{"kind": "data", "data": data}]}}
                    assert "result" in http.post(f"{url}agentenv", json=add).json()
                get = {"jsonrpc": "2.0", "id": 0, "method": "data/get", "params": {}}
                messages = http.post(f"{url}agentenv", json=get).json()["result"]["parts"][0]["data"]["messages"]
                assert [m["text"] for m in messages] == [f"{n}-{i}" for i in range(20)]
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            failures.append(f"client {n}: {e!r}")

    clients = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for c in clients:
        c.start()
    for c in clients:
        c.join(60)
    assert not failures, failures


def test_zero_http_threads_are_refused(envhost_bin):
    done = subprocess.run([str(envhost_bin), "serve", str(SLACK_WASM), "--http-threads", "0"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "--http-threads" in done.stderr
