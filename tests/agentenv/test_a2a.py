"""envhost's agent deployments as A2A agents, read by the a2a-sdk client and checked with its
types (docs/agent-env.md): the card, a streamed task, tasks read back, polled and canceled, the
framework's extensions, and bad input answered with codes while the deployment keeps serving."""
from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskResponse,
    GetTaskResponse,
    JSONRPCErrorResponse,
    Message,
    Part,
    Role,
    SendMessageResponse,
    SendStreamingMessageResponse,
    Task,
    TaskQueryParams,
    TaskState,
    TextPart,
)

from conftest import free_port, start, wait_until

HERE = Path(__file__).parent


def rpc(base: str, method: str, params: dict | None = None, raw: bytes | None = None) -> dict:
    body = raw if raw is not None else json.dumps(
        {"jsonrpc": "2.0", "id": "1", "method": method, "params": params or {}}).encode()
    answer = httpx.post(f"{base}/a2a", content=body, headers={"content-type": "application/json"}, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.json()


def message(text: str, context: str | None = None) -> dict:
    return {"messageId": uuid.uuid4().hex, "role": "user", "parts": [{"kind": "text", "text": text}],
            "contextId": context or uuid.uuid4().hex}


def add_slack(envhost, base: str) -> None:
    episode = envhost.episode()
    added = httpx.post(f"{base}/ext/mcp-config", json={"url": envhost.url + episode["mcp_url"], "name": "slack"})
    assert added.status_code == 200, added.text


def until_terminal(base: str, task_id: str) -> dict:
    for _ in range(600):
        answer = rpc(base, "tasks/get", {"id": task_id})
        GetTaskResponse.model_validate(answer)
        if answer["result"]["status"]["state"] in ("completed", "failed", "canceled"):
            return answer["result"]
        asyncio.run(asyncio.sleep(0.05))
    raise AssertionError(f"task {task_id} did not end")


def reply(task: dict) -> str:
    texts = [p["text"] for p in task["status"]["message"]["parts"] if p["kind"] == "text"]
    return texts[-1]


def data(task: dict) -> dict:
    return next(p["data"] for p in task["status"]["message"]["parts"] if p["kind"] == "data")


def test_the_card_is_an_a2a_card_at_both_paths(envhost):
    base = envhost.deploy()
    card = httpx.get(f"{base}/.well-known/agent.json").json()
    assert httpx.get(f"{base}/.well-known/agent-card.json").json() == card
    parsed = AgentCard.model_validate(card)
    assert parsed.protocol_version == "0.3.0" and parsed.capabilities.streaming
    uris = {e.uri: e.params["endpoint"] for e in parsed.capabilities.extensions}
    assert uris == {"urn:agentenv:agent-config/v1": "/ext/agent-config",
                    "urn:agentenv:mcp-config/v1": "/ext/mcp-config",
                    "urn:agentenv:trajectory/v1": "/ext/trajectory",
                    "urn:agentenv:snapshot/v1": "/ext/snapshot"}
    assert httpx.get(f"{base}/health").json() == {"status": "ok"}
    httpx.post(f"{base}/ext/agent-config", json={"name": "solver"}).raise_for_status()
    assert httpx.get(f"{base}/.well-known/agent.json").json()["name"] == "solver"


def test_the_a2a_sdk_client_streams_a_task_and_reads_it_back(envhost):
    base = envhost.deploy()
    add_slack(envhost, base)

    async def streamed():
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            card = await A2ACardResolver(http, base).get_agent_card()
            client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
            sent = Message(message_id=uuid.uuid4().hex, role=Role.user,
                           parts=[Part(root=TextPart(text="The build is green"))])
            events = [event async for event in client.send_message(sent)]
            task, _ = events[-1]
            again = await client.get_task(TaskQueryParams(id=task.id))
            return events, task, again

    events, task, again = asyncio.run(streamed())
    updates = [update for _, update in events if update is not None]
    assert len(updates) >= 3
    assert task.status.state == TaskState.completed
    assert again.status.state == TaskState.completed
    final = again.status.message.parts
    assert [p.root.kind for p in final] == ["text", "data"]
    assert final[0].root.text == "Posted to #general."
    assert final[1].root.data["usage"] == {"tool_call_count": 1}


def test_message_stream_frames_are_a2a_answers(envhost):
    base = envhost.deploy()
    body = {"jsonrpc": "2.0", "id": 7, "method": "message/stream", "params": {"message": message("hello")}}
    with httpx.stream("POST", f"{base}/a2a", json=body, timeout=60) as answer:
        assert answer.headers["content-type"].startswith("text/event-stream")
        frames = [json.loads(line[6:]) for line in answer.iter_lines() if line.startswith("data: ")]
    for frame in frames:
        SendStreamingMessageResponse.model_validate(frame)
        assert frame["id"] == 7
    assert frames[0]["result"]["kind"] == "task" and frames[0]["result"]["status"]["state"] == "submitted"
    assert frames[-1]["result"]["final"] is True
    assert frames[-1]["result"]["status"]["state"] == "completed"
    assert [f["result"]["status"]["state"] for f in frames[1:-1] if f["result"]["kind"] == "status-update"][0] == "working"


def test_a_non_blocking_send_is_submitted_then_polled_to_its_end(envhost):
    base = envhost.deploy()
    add_slack(envhost, base)
    sent = rpc(base, "message/send", {"message": message("Ship it", "ctx-1"), "configuration": {"blocking": False}})
    SendMessageResponse.model_validate(sent)
    assert sent["result"]["status"] == {"state": "submitted"}
    task = until_terminal(base, sent["result"]["id"])
    assert task["contextId"] == "ctx-1" and reply(task) == "Posted to #general."
    trajectory = httpx.post(f"{base}/ext/trajectory", json={"task_id": task["id"]}).json()["trajectory"]
    assert trajectory[0] == {"type": "prompt", "text": "Ship it"}
    assert [e["type"] for e in trajectory][-1] == "completed"
    page = httpx.post(f"{base}/ext/trajectory", json={"context_id": "ctx-1", "after": 1, "limit": 2}).json()
    assert page["next"] == 3 and page["has_more"] and page["state"] == "completed"
    assert page["format"] == "agent-handler/v1" and page["events"] == trajectory[1:3]
    blocking = rpc(base, "message/send", {"message": message("Once more", "ctx-1")})
    assert blocking["result"]["status"]["state"] == "completed"
    history = rpc(base, "tasks/get", {"id": blocking["result"]["id"], "historyLength": 1})["result"]["history"]
    assert len(history) == 1


class Silent:
    """A loopback listener that accepts connections and never answers: an MCP server that hangs."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.held = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.held.append(connection)


def test_a_running_task_is_canceled_and_the_deployment_goes_on(envhost):
    silent = Silent()
    base = envhost.deploy()
    httpx.post(f"{base}/ext/mcp-config", json={"url": f"http://127.0.0.1:{silent.port}/mcp"}).raise_for_status()
    sent = rpc(base, "message/send", {"message": message("hello"), "configuration": {"blocking": False}})
    task_id = sent["result"]["id"]
    canceled = rpc(base, "tasks/cancel", {"id": task_id})
    CancelTaskResponse.model_validate(canceled)
    assert canceled["result"]["status"]["state"] == "canceled"
    again = rpc(base, "tasks/cancel", {"id": task_id})
    JSONRPCErrorResponse.model_validate(again)
    assert again["error"] == {"code": -32002, "message": "Task cannot be canceled - current state: TaskState.canceled"}
    assert httpx.get(f"{base}/health").status_code == 200
    silent.socket.close()


def test_an_mcp_server_that_refuses_fails_the_task_with_a_code(envhost):
    base = envhost.deploy()
    closed = free_port()
    secret = uuid.uuid4().hex
    url = f"http://127.0.0.1:{closed}/agent/{uuid.uuid4().hex}/{secret}/mcp?sig=abc"
    httpx.post(f"{base}/ext/mcp-config", json={"url": url, "name": "gone"}).raise_for_status()
    task = rpc(base, "message/send", {"message": message("hello")})["result"]
    assert task["status"]["state"] == "failed"
    failure = data(task)
    assert failure["error_type"] == "infra_error" and failure["error_code"] == "mcp_unavailable"
    assert "gone" in failure["error_message"] and reply(task) == failure["error_message"]
    assert f"http://127.0.0.1:{closed}" in failure["error_message"]
    assert secret not in json.dumps(task) and "sig=" not in json.dumps(task)
    assert secret not in envhost.log.read_text()


def test_an_mcp_server_that_dies_mid_turn_fails_only_that_task(envhost, tmp_path):
    port = free_port()
    log = tmp_path / "dying.log"
    server = start([sys.executable, str(HERE / "dying_mcp.py"), str(port)], log)
    try:
        wait_until(f"http://127.0.0.1:{port}/mcp", server, log)
        base = envhost.deploy()
        httpx.post(f"{base}/ext/mcp-config", json={"url": f"http://127.0.0.1:{port}/mcp", "name": "dying"}).raise_for_status()
        task = rpc(base, "message/send", {"message": message("hello")})["result"]
        assert server.wait(timeout=30) == 3
        assert task["status"]["state"] == "failed"
        assert data(task)["error_code"] == "mcp_unavailable"
        started = [m for m in task["history"] if m["role"] == "agent"
                   and m["parts"][0]["data"].get("type") == "tool_started"]
        assert started and started[0]["parts"][0]["data"]["name"] == "dying_send_message"
    finally:
        server.kill()
    other = envhost.deploy()
    add_slack(envhost, other)
    assert reply(rpc(other, "message/send", {"message": message("still here")})["result"]) == "Posted to #general."
    assert httpx.get(f"{base}/.well-known/agent.json").status_code == 200


@pytest.mark.parametrize("raw, code", [
    (b"{not json", -32700),
    (b"[1, 2]", -32600),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "tasks/get", "params": {"id": "x"}}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "foo/bar", "params": {}}', -32601),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "message/send"}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {"messageId": "m", "role": "user", "parts": []}}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "no-such-task"}}', -32001),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", "params": {"id": "no-such-task"}}', -32001),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/get", "params": {"id": "x"}}', -32004),
])
def test_bad_json_rpc_gets_the_frameworks_codes(envhost, raw, code):
    base = envhost.deploy()
    answer = rpc(base, "", raw=raw)
    JSONRPCErrorResponse.model_validate(answer)
    assert answer["error"]["code"] == code
    assert httpx.get(f"{base}/health").json() == {"status": "ok"}


def test_extension_bodies_are_checked_as_the_framework_checks_them(envhost):
    base = envhost.deploy()
    url = "http://127.0.0.1:9/mcp"
    first = httpx.post(f"{base}/ext/mcp-config", json={"url": url, "name": "one"})
    assert first.json() == {"status": "added", "name": "one", "url": url}
    again = httpx.post(f"{base}/ext/mcp-config", json={"url": url, "name": "two"})
    assert (again.status_code, again.text) == (409, f"MCP URL '{url}' already registered as 'one'")
    named = httpx.post(f"{base}/ext/mcp-config", json={"url": "http://127.0.0.1:10/mcp", "name": "one"})
    assert (named.status_code, named.text) == (409, "MCP name 'one' is already registered")
    assert httpx.post(f"{base}/ext/mcp-config", json={"name": "x"}).status_code == 400
    assert httpx.get(f"{base}/ext/mcp-config").json() == {"mcp_servers": {"one": {"url": url, "has_headers": False}}}
    unknown = httpx.post(f"{base}/ext/agent-config", json={"model": "m", "effort": "high"})
    assert unknown.status_code == 400
    assert json.loads(unknown.text) == [{"type": "extra_forbidden", "loc": ["effort"], "msg": "Extra inputs are not permitted"}]
    assert httpx.post(f"{base}/ext/agent-config", json={"timeout_seconds": "abc"}).status_code == 400
    assert httpx.get(f"{base}/ext/agent-config").json() == {"config": {}}
    assert httpx.post(f"{base}/ext/agent-config", json={"max_turns": 3}).json() == {"status": "updated"}
    assert httpx.get(f"{base}/ext/agent-config").json() == {"config": {"max_turns": 3}}
    missing = httpx.post(f"{base}/ext/trajectory", json={"task_id": "no-such-task"})
    assert (missing.status_code, missing.text) == (404, "No completed trajectory available for task 'no-such-task'")


def test_deployment_urls_need_their_secret_and_control_routes_the_token(envhost):
    base = envhost.deploy()
    wrong = base[:-4] + "0000"
    assert httpx.get(f"{wrong}/.well-known/agent.json").status_code == 403
    assert httpx.post(f"{envhost.url}/agents/tool-agent/deployments").status_code == 401
    assert httpx.get(f"{envhost.url}/deployments").status_code == 401
    with envhost.control() as client:
        assert client.post("/agents/nobody/deployments").json()["error"]["code"] == "agent_not_found"
        deployment_id = base.split("/deployments/")[1].split("/")[0]
        assert client.delete(f"/deployments/{deployment_id}").json() == {"id": deployment_id, "deleted": True}
        assert client.delete(f"/deployments/{deployment_id}").status_code == 404
    assert httpx.get(f"{base}/.well-known/agent.json").status_code == 403
