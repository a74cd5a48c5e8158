"""Agents served by envhost (`envhost serve ... --agent`): a conversation started on one envhost
process continues on a second one sharing `--sessions-dir`, with a Chat Completions server on
loopback as the model."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from conftest import CARD_PATH, GUEST_RELEASE, SLACK_WASM, free_port, run

TOOL_AGENT_WASM = GUEST_RELEASE / "tool_agent.wasm"


class ChatCompletions(BaseHTTPRequestHandler):
    """Answers each request with the next of `scripted` deltas, else one streamed text, `Answer N`;
    keeps the request bodies."""

    requests: list[dict] = []
    scripted: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).requests.append(body)
        delta = type(self).scripted.pop(0) if type(self).scripted else {
            "content": f"Answer {len(type(self).requests)}"}
        chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        payload = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def model():
    ChatCompletions.requests = []
    ChatCompletions.scripted = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def serve_agent(pool, model_url: str, sessions_dir, label: str):
    port = free_port()
    argv = [str(pool.envhost_bin), "serve", str(SLACK_WASM), "--agent", f"tool={TOOL_AGENT_WASM}",
            "--model-url", model_url, "--model", "scripted", "--sessions-dir", str(sessions_dir),
            "--host", "127.0.0.1", "--port", str(port)]
    return pool._launch(label, argv, {"ENVIRONMENT_NAME": ""}, port, CARD_PATH)


def ask(server, session: str, text: str) -> dict:
    answer = httpx.post(server.url("/agents/tool/invoke"), json={"session": session, "text": text},
                        headers={"accept": "application/json"}, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_conversation_continues_on_a_second_process_sharing_the_sessions_dir(pool, model, tmp_path):
    sessions = tmp_path / "sessions"
    first = serve_agent(pool, model, sessions, "agent-first")
    assert ask(first, "-1001234567890", "first") == {"text": "Answer 1", "data": None}
    first.stop()
    second = serve_agent(pool, model, sessions, "agent-second")
    assert ask(second, "-1001234567890", "second") == {"text": "Answer 2", "data": None}
    turn_two = [(m["role"], m["content"]) for m in ChatCompletions.requests[1]["messages"]]
    assert turn_two == [("user", "first"), ("assistant", "Answer 1"), ("user", "second")]
    assert ChatCompletions.requests[1]["model"] == "scripted"
    assert ask(second, "another", "alone")["text"] == "Answer 3"
    assert [m["content"] for m in ChatCompletions.requests[2]["messages"]] == ["alone"]


def test_the_official_mcp_client_sees_the_tool_calls_the_agent_made_in_the_episode(pool, model, tmp_path):
    server = serve_agent(pool, model, tmp_path / "sessions", "agent-tools")
    seed = {"channels": [{"name": "general", "topic": ""}], "messages": []}
    added = httpx.post(server.url("/agentenv"), json={"jsonrpc": "2.0", "id": 1, "method": "data/add",
                                                      "params": {"parts": [{"kind": "data", "data": seed}]}})
    assert "result" in added.json(), added.text
    args = {"channel": "general", "text": "posted by the agent", "to": "reader"}
    ChatCompletions.scripted = [{"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                 "function": {"name": "slack_send_message",
                                                              "arguments": json.dumps(args)}}]},
                                {"content": "Posted."}]
    stream = httpx.post(server.url("/agents/tool/invoke"), json={"session": "s", "text": "post it"}, timeout=60)
    events = [json.loads(line[len("data: "):]) for line in stream.text.split("\n\n") if line.startswith("data: ")]
    assert [e["type"] for e in events] == ["tool_started", "tool_ended", "text", "completed"]
    assert events[0]["args"] == args and events[1]["isError"] is False

    async def inbox() -> list:
        async with streamablehttp_client(server.url("/mcp"), headers={"AgentEnv-Role": "reader"}) as (read, write, _):
            async with ClientSession(read, write) as client:
                await client.initialize()
                result = await client.call_tool("slack_list_inbox", {})
                assert not result.isError, result.content
                return result.structuredContent["result"]
    messages = run(inbox())
    assert [m["text"] for m in messages] == ["posted by the agent"]
