"""agent-config/v1 changes what a deployment's tasks run with (docs/agent-env.md#agent-config):
the system prompt and model name the model is sent, the most model calls, the time a task may
take, and the card's name."""
from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from conftest import COMPONENTS, ROOT, TOKEN, free_port, start, wait_until
from test_a2a import Silent, add_slack, data, message, rpc


class RecordingModel:
    """A Chat Completions endpoint on loopback that keeps every request and answers `ok`."""

    def __init__(self):
        self.requests: list[dict] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                model.requests.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
                body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_system_prompt_and_model_reach_the_model(tmp_path):
    model = RecordingModel()
    port = free_port()
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    binary = os.environ.get("ENVHOST_BIN", str(ROOT / "target/release/envhost"))
    log = tmp_path / "envhost.log"
    server = start([binary, "serve", f"slack={COMPONENTS / 'slack.wasm'}",
                    "--agent", f"tool-agent={COMPONENTS / 'tool_agent.wasm'}", "--model-url", model.url,
                    "--port", str(port), "--control-token-file", str(token_file)], log)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until(f"{url}/ready", server, log)
        created = httpx.post(f"{url}/agents/tool-agent/deployments", headers={"Authorization": f"Bearer {TOKEN}"})
        base = url + created.json()["url"]
        httpx.post(f"{base}/ext/agent-config", json={"system_prompt": "Be brief.", "model": "m-2"}).raise_for_status()
        task = rpc(base, "message/send", {"message": message("hi")})["result"]
        assert task["status"]["state"] == "completed", task
        sent = model.requests[-1]
        assert sent["model"] == "m-2"
        assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
        assert sent["messages"][-1]["content"] == "hi"
    finally:
        server.terminate()
        server.wait()
        model.server.shutdown()


def test_max_turns_and_timeout_end_a_task_with_their_codes(envhost):
    base = envhost.deploy()
    add_slack(envhost, base)
    httpx.post(f"{base}/ext/agent-config", json={"max_turns": 1}).raise_for_status()
    task = rpc(base, "message/send", {"message": message("Post this")})["result"]
    assert task["status"]["state"] == "failed"
    assert data(task)["error_code"] == "max_turns"

    silent = Silent()
    slow = envhost.deploy()
    httpx.post(f"{slow}/ext/mcp-config", json={"url": f"http://127.0.0.1:{silent.port}/mcp"}).raise_for_status()
    httpx.post(f"{slow}/ext/agent-config", json={"timeout_seconds": 1}).raise_for_status()
    task = rpc(slow, "message/send", {"message": message("hello")})["result"]
    assert task["status"]["state"] == "failed"
    assert data(task)["error_code"] == "timeout" and data(task)["error_type"] == "infra_error"
    silent.socket.close()
