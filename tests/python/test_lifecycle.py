"""The server process: it stops on SIGTERM, as container runtimes and service managers stop it,
even while a client holds a standalone MCP stream open."""

from __future__ import annotations

import signal
import subprocess
import threading

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
