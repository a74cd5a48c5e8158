"""The slack implementations against each other: the implementations whose SDK writes schemas as
the Rust SDK does (`OTHERS`: slack-js) must answer exactly as the Rust one (`slack`, the
baseline) does. slack-py writes pydantic's schemas, as the reference SDK does; where it differs
from the Rust slack is asserted in test_slack_implementations.py.

The suites that take `envhost_server` already run once per implementation against the reference
Python SDK; this one compares the implementations directly, on what those suites normalise away:
the card and tools/list in full (schemas, output schemas, annotations), and data-plane and
extension answers byte for byte. Where an implementation words a text its own way, the test says
so and asserts the difference.
"""
from __future__ import annotations

import base64
import json

import httpx
import pytest

from conftest import (
    CARD_PATH, SLACK_IMPLEMENTATIONS, STATS_PATH, McpSession, Server, data_part, rpc_post, tool_access,
)
from test_differential import CASES, CHAT_CASES, assert_same, run_case

BASELINE = "slack"
OTHERS = ["slack-js"]
assert set(OTHERS) < set(SLACK_IMPLEMENTATIONS)
SEED = data_part(
    [{"name": "general", "topic": "chit-chat"}, {"name": "random"}],
    [{"channel": "general", "text": "hello", "from": "alice", "to": "bob"},
     {"channel": "random", "text": "hi", "to": "alice"}],
)


@pytest.fixture(scope="module")
def servers(pool, data_root) -> dict[str, Server]:
    """One envhost server per implementation, for this module alone."""
    return {name: pool.slack(name, "--data-root", str(data_root), label="envhost-vs")
            for name in (BASELINE, *OTHERS)}


@pytest.fixture(scope="module")
def chat_servers(pool) -> dict[str, Server]:
    """One envhost server per implementation, served as ENVIRONMENT_NAME=chat."""
    return {name: pool.slack(name, env={"ENVIRONMENT_NAME": "chat"}, label="envhost-chat-vs")
            for name in (BASELINE, *OTHERS)}


def _listed_tools(server: Server) -> list[dict]:
    """tools/list for a role granted the hidden tool, so every tool is listed."""
    assert tool_access(server, "enable", {"role": "admin", "tools": ["slack_admin_purge"]}).status_code == 200
    try:
        with McpSession(server, role="admin") as session:
            return session.result("tools/list")["tools"]
    finally:
        assert tool_access(server, "enable", {"role": "*", "tools": "*"}).status_code == 200


@pytest.mark.parametrize("name", OTHERS)
def test_the_card_is_the_same_bytes(servers, name):
    ours, theirs = (httpx.get(servers[n].url(CARD_PATH), timeout=30) for n in (name, BASELINE))
    assert ours.content == theirs.content


@pytest.mark.parametrize("name", OTHERS)
def test_tools_list_is_the_same(servers, name):
    """The same tools, schemas, output schemas and annotations. Compared as JSON values: the key
    order inside a schema may differ (schemars puts an empty-argument tool's `title` before
    `properties`, the JS SDK after; JSON Schema gives key order no meaning)."""
    assert _listed_tools(servers[name]) == _listed_tools(servers[BASELINE])


def _wire(server: Server) -> list[bytes]:
    """A session of data-plane, extension and tool calls, answered as the bytes on the wire (MCP
    results as their JSON)."""
    answers = []
    rpc = lambda method, params: answers.append(rpc_post(server, {"jsonrpc": "2.0", "id": 1, "method": method,
                                                                   "params": params}).content)
    rpc("data/reset", {})
    rpc("data/add", {"parts": [SEED, {"kind": "text", "text": "ignored"}]})
    file_part = {"kind": "file", "file": {"bytes": base64.b64encode(json.dumps(
        {"channels": [{"name": "files", "topic": None}], "messages": [{"channel": "files", "text": "f"}]}).encode()).decode()}}
    rpc("data/add", {"parts": [file_part]})
    rpc("data/add", {"parts": [data_part([{"name": "x"}], [{"channel": "nope", "text": "t"}])]})
    rpc("data/add", {"parts": [data_part([{"name": ""}])]})
    rpc("data/add", {"parts": [{"kind": "data", "data": {"channels": {}}}]})
    rpc("data/add", {"parts": [data_part([{"name": "t", "topic": 3}])]})
    rpc("data/add", {"parts": [data_part([], [{"channel": "general", "text": "t", "from": 1}])]})
    rpc("data/get", {})
    for role in ("alice", "bob", None):
        with McpSession(server, role=role) as session:
            for tool, arguments in [("slack_send_message", {"channel": "general", "text": f"from {role}", "to": "bob"}),
                                    ("slack_send_message", {"channel": "nope", "text": "x"}),
                                    ("slack_list_inbox", {}), ("slack_list_channels", {}),
                                    ("slack_admin_purge", {"channel": "random"}), ("slack_unknown", {})]:
                answers.append(json.dumps(session.request("tools/call", {"name": tool, "arguments": arguments})))
    assert tool_access(server, "enable", {"role": "ops", "tools": ["slack_admin_purge"]}).status_code == 200
    with McpSession(server, role="ops") as session:
        for channel in ("random", "nope"):
            answers.append(json.dumps(session.request("tools/call", {"name": "slack_admin_purge",
                                                                     "arguments": {"channel": channel}})))
    for verb, path, body in [("GET", "/get", None), ("POST", "/set-topic", {"channel": "general", "topic": "new"}),
                             ("POST", "/set-topic", {"channel": "nope", "topic": "t"})]:
        response = httpx.request(verb, server.url(f"{STATS_PATH}{path}"), json=body, timeout=30)
        answers.append(f"{response.status_code} ".encode() + response.content)
    rpc("data/get", {})
    return answers


@pytest.mark.parametrize("name", OTHERS)
def test_the_same_session_answers_the_same_bytes(servers, name):
    assert _wire(servers[name]) == _wire(servers[BASELINE])


@pytest.mark.parametrize("name", OTHERS)
@pytest.mark.parametrize("case_", CASES, ids=[c.id for c in CASES])
def test_the_differential_cases_answer_the_same(servers, data_root, file_server, name, case_):
    """Every case of the differential suite, this implementation against the Rust one."""
    ours = run_case(servers[name], case_, data_root, file_server)
    theirs = run_case(servers[BASELINE], case_, data_root, file_server)
    assert_same(case_, ours, theirs)


@pytest.mark.parametrize("name", OTHERS)
@pytest.mark.parametrize("case_", CHAT_CASES, ids=[c.id for c in CHAT_CASES])
def test_the_renamed_cases_answer_the_same(chat_servers, data_root, file_server, name, case_):
    ours = run_case(chat_servers[name], case_, data_root, file_server)
    theirs = run_case(chat_servers[BASELINE], case_, data_root, file_server)
    assert_same(case_, ours, theirs)


def _set_topic_error(server: Server, topic) -> dict:
    assert rpc_post(server, {"jsonrpc": "2.0", "id": 1, "method": "data/add", "params": {"parts": [SEED]}}).status_code == 200
    response = httpx.post(server.url(f"{STATS_PATH}/set-topic"), json={"channel": "general", "topic": topic}, timeout=30)
    assert response.status_code == 400
    return response.json()["error"]


@pytest.mark.parametrize("name", OTHERS)
@pytest.mark.parametrize("topic, kind", [(5, "integer `5`"), (None, "null"), ([1], "sequence")])
def test_difference_extension_type_error_texts(servers, name, topic, kind):
    """An extension request of the wrong type (the host checks only required and unknown keys):
    both answer 400 invalid_params with serde's wording of the mismatch, but Rust's serde locates
    it by line and column of the request text, which a guest that receives the parsed request
    cannot know; the JS SDK names the property instead."""
    ours, theirs = (_set_topic_error(servers[n], topic) for n in (name, BASELINE))
    expected = f"invalid type: {kind}, expected a string"
    assert {**ours, "message": None} == {**theirs, "message": None}
    assert ours["code"] == "invalid_params"
    assert theirs["message"].startswith(f"{expected} at line 1 column ")
    if name == "slack-js":
        assert ours["message"] == f"{expected} at 'topic'"


def _file_error(server: Server, content: bytes) -> dict:
    part = {"kind": "file", "file": {"bytes": base64.b64encode(content).decode()}}
    return rpc_post(server, {"jsonrpc": "2.0", "id": 1, "method": "data/add", "params": {"parts": [part]}}).json()


@pytest.mark.parametrize("name", OTHERS)
@pytest.mark.parametrize("content", [b"<html>", b"", b"{\"channels\": [", b"\xff\xfe{}"], ids=["html", "empty", "cut", "not-utf8"])
def test_difference_json_decoder_texts(servers, name, content):
    """A file part that is not JSON: the same error, whose text ends with the JSON decoder's own
    message (serde_json's in Rust, the engine's JSON.parse or the SDK's UTF-8 check in JS)."""
    ours, theirs = (_file_error(servers[n], content) for n in (name, BASELINE))
    prefix = "the file part is not JSON: "
    assert ours["error"]["message"].startswith(prefix) and theirs["error"]["message"].startswith(prefix)
    assert ({**ours["error"], "message": None}) == ({**theirs["error"], "message": None})
