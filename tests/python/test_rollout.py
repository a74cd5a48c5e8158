"""The rollout loop of docs/agents.md ("The rollout loop"), end to end: `tools/scripted-model.py`
as the model, `envhost serve slack=slack.wasm --agent tool=tool_agent.wasm --model-url ...`, the
root episode seeded through `data/add`, a turn invoked over HTTP (its SSE events parsed, then
buffered), and `data/get` reading back what the agent posted."""
from __future__ import annotations

import json
import sys

import httpx
import pytest

from conftest import GUEST_RELEASE, REPO, data_part, free_port, reset_state, rpc, sse_events, state

TOOL_AGENT_WASM = GUEST_RELEASE / "tool_agent.wasm"
SCRIPTED_MODEL = REPO / "tools" / "scripted-model.py"
GENERAL = {"name": "general"}


@pytest.fixture(scope="module")
def model_url(pool) -> str:
    """`python3 tools/scripted-model.py --port N` on a free port: its base URL, `.../v1`."""
    port = free_port()
    model = pool._launch("scripted-model", [sys.executable, str(SCRIPTED_MODEL), "--port", str(port)],
                         {}, port, "/v1/models")
    yield model.url("/v1")
    model.stop()


@pytest.fixture(scope="module")
def agent_server(pool, model_url):
    """slack and the tool agent, served as docs/agents.md serves them."""
    server = pool.slack("slack", "--agent", f"tool={TOOL_AGENT_WASM}", "--model-url", model_url,
                        label="rollout")
    yield server
    server.stop()


@pytest.fixture
def slack(agent_server):
    """The root episode, emptied, then seeded with `#general` as docs/agents.md's `data/add` does."""
    reset_state(agent_server)
    assert rpc(agent_server, "data/add", {"parts": [data_part(channels=[GENERAL])]}) == {
        "jsonrpc": "2.0", "id": 1, "result": {}}
    return agent_server


def invoke(server, body: dict, **headers) -> httpx.Response:
    response = httpx.post(server.url("/agents/tool/invoke"), json=body, headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    return response


def streamed(server, body: dict) -> list[dict]:
    """A turn's events, from the SSE frames of the invoke answer (pings left out)."""
    response = invoke(server, body)
    assert response.headers["content-type"].startswith("text/event-stream")
    return [json.loads(e["data"]) for e in sse_events(response.text) if "data" in e]


def posted(server_or_episode) -> list[tuple[str, str]]:
    """(channel, text) of every message, as data/get answers them."""
    return [(m["channel"], m["text"]) for m in state(server_or_episode)["messages"]]


def check_turn(events: list[dict], text: str) -> None:
    """thinking, then one slack_send_message call to #general wrapped in tool_started/tool_ended
    with the same id, then text, and `completed` last and once."""
    kinds = [e["type"] for e in events]
    assert kinds.count("completed") == 1 and kinds[-1] == "completed", kinds
    assert "failed" not in kinds, events
    assert kinds.index("thinking") < kinds.index("tool_started") < kinds.index("tool_ended") < kinds.index("text")
    assert kinds.count("tool_started") == kinds.count("tool_ended") == 1, kinds
    started = next(e for e in events if e["type"] == "tool_started")
    ended = next(e for e in events if e["type"] == "tool_ended")
    assert started["id"] == ended["id"]
    assert started["name"] == "slack_send_message"
    assert started["args"] == {"channel": "general", "text": text}
    assert ended["isError"] is False
    assert ended["content"] == [{"type": "text", "text": "ok"}]
    assert "".join(e["delta"] for e in events if e["type"] == "thinking")
    assert "".join(e["delta"] for e in events if e["type"] == "text") == "Posted to #general."


def test_a_streamed_turn_posts_through_the_tool_and_data_get_reads_it_back(slack):
    events = streamed(slack, {"session": "s1", "text": "hello team"})
    check_turn(events, "hello team")
    assert posted(slack) == [("general", "hello team")]


def test_the_buffered_answer_is_the_text_and_data_and_the_session_carries_on(slack):
    check_turn(streamed(slack, {"session": "s2", "text": "hello team"}), "hello team")
    answer = invoke(slack, {"session": "s2", "text": "lunch at noon"}, accept="application/json")
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == {"text": "Posted to #general.", "data": None}
    assert posted(slack) == [("general", "hello team"), ("general", "lunch at noon")]


def test_episode_in_the_body_runs_the_turn_on_that_episode(slack):
    created = httpx.post(slack.url("/episodes"), json={"environment": "slack", "parts": [data_part(channels=[GENERAL])]})
    assert created.status_code == 201, created.text
    episode = created.json()
    try:
        events = streamed(slack, {"session": "s3", "text": "in an episode", "episode": episode["id"]})
        check_turn(events, "in an episode")
        assert posted(slack.url(episode["url"].rstrip("/"))) == [("general", "in an episode")]
        assert posted(slack) == []
    finally:
        httpx.delete(slack.url(f"/episodes/{episode['id']}"))


def test_an_unseeded_channel_is_a_tool_error_the_model_reports(agent_server):
    reset_state(agent_server)
    events = streamed(agent_server, {"session": "s4", "text": "nobody home"})
    ended = next(e for e in events if e["type"] == "tool_ended")
    assert ended["isError"] is True
    text = "".join(e["delta"] for e in events if e["type"] == "text")
    assert text == "The tool answered: channel_not_found: no channel named 'general'"
    assert events[-1] == {"type": "completed"}


def test_the_scripted_model_answers_unstreamed_and_lists_its_model(model_url):
    models = httpx.get(f"{model_url}/models")
    assert models.json()["data"][0]["id"] == "scripted"
    tool = {"type": "function", "function": {"name": "slack_send_message", "parameters": {"type": "object"}}}
    asked = httpx.post(f"{model_url}/chat/completions", json={
        "model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [tool]}).json()
    assert asked["object"] == "chat.completion" and asked["model"] == "m"
    choice = asked["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["reasoning_content"]
    call = choice["message"]["tool_calls"][0]
    assert call["id"] == "call_1" and call["function"]["name"] == "slack_send_message"
    assert json.loads(call["function"]["arguments"]) == {"channel": "general", "text": "hi"}
    answered = httpx.post(f"{model_url}/chat/completions", json={"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}], "tools": [tool]}).json()
    assert answered["choices"][0] == {"index": 0, "message": {"role": "assistant", "content": "Posted to #general."},
                                      "finish_reason": "stop"}
    plain = httpx.post(f"{model_url}/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}).json()
    assert plain["choices"][0]["message"]["content"] == "You said: hi"
