"""The real clients against `envhost serve slack.wasm`: the reference data-plane client
(`agentenv_protocol.client`), the reference tool client (`agentenv_protocol.ToolSession`), the
official MCP Python SDK, plus raw HTTP where the wire itself is the contract (protocol.md#envelope envelopes, MCP
session errors, body limits, readiness, roles, tool access)."""
from __future__ import annotations

import asyncio
import base64
import json
import os

import httpx
import pytest
from agentenv_protocol import DataPart, FilePart, TextPart, ToolSession, ToolSessionError
from agentenv_protocol import client as env_client
from agentenv_protocol.client import ExtensionCallError
from agentenv_protocol.types import FileWithBytes, FileWithUri
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from conftest import (
    CARD_PATH, HIDDEN_META, MCP_ACCEPT, ROLE_META, SESSION_META, STATS_PATH, STATS_URI,
    McpSession, data_part, reset_state, rpc, rpc_post, run, seed, state, tool_access, visible_tools,
)

# The brief of this suite is to drive the official client through `streamablehttp_client`, which
# mcp 1.30 marks deprecated in favour of `streamable_http_client`.
pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")

SEND, INBOX, CHANNELS, PURGE = "slack_send_message", "slack_list_inbox", "slack_list_channels", "slack_admin_purge"
VISIBLE = [CHANNELS, INBOX, SEND]  # tools/list order of a caller with no rules (admin_purge is hidden)
SEED = {"channels": [{"name": "general", "topic": "chit-chat"}, {"name": "random"}],
        "messages": [{"channel": "general", "text": "hello", "from": "alice", "to": "bob"}]}


def message(channel: str, text: str, sender=None, to=None) -> dict:
    return {"channel": channel, "text": text, "from": sender, "to": to}


def messages_of(server) -> list[dict]:
    return state(server)["messages"]


# ==================================================================== data plane: agentenv_protocol.client

def test_get_card_names_the_environment_and_its_operations(envhost):
    card = run(env_client.get_card(envhost.base_url))
    assert card["name"] == "slack"
    assert card["url"] == "/agentenv"
    assert card["capabilities"]["operations"] == ["data/reset", "data/add", "data/get"]
    assert [t["name"] for t in card["capabilities"]["tools"]] == [PURGE, CHANNELS, INBOX, SEND]
    assert env_client.mcp_path(card) == "/mcp"
    assert env_client.find_extension(card, STATS_URI) is not None


def test_supports_v1_is_true_for_envhost_and_false_where_no_card_is_served(envhost):
    assert run(env_client.supports_v1(envhost.base_url)) is True
    # A base URL envhost serves no card under: 404, which the client reads as "legacy".
    assert run(env_client.supports_v1(envhost.url("/nowhere"))) is False


def test_reset_then_get_answers_empty_data(envhost):
    seed(envhost, **SEED)
    run(env_client.reset_data(envhost.base_url))
    got = run(env_client.get_data(envhost.base_url))
    assert [p.model_dump(exclude_none=True) for p in got.parts] == [
        {"kind": "data", "data": {"channels": [], "messages": []}}]


def test_add_data_part_then_get_data_answers_it_normalised(envhost):
    run(env_client.add_data(envhost.base_url, [DataPart(data=SEED)]))
    got = run(env_client.get_data(envhost.base_url))
    assert len(got.parts) == 1 and isinstance(got.parts[0], DataPart)
    assert got.parts[0].data == {
        "channels": [{"name": "general", "topic": "chit-chat"}, {"name": "random", "topic": ""}],
        "messages": [message("general", "hello", "alice", "bob")],
    }


def test_add_is_additive_and_upserts_channels(envhost):
    run(env_client.add_data(envhost.base_url, [DataPart(data=SEED)]))
    run(env_client.add_data(envhost.base_url, [
        DataPart(data={"channels": [{"name": "general", "topic": "new topic"}],
                       "messages": [{"channel": "random", "text": "second"}]}),
        TextPart(text="text parts are ignored"),
    ]))
    data = state(envhost)
    assert data["channels"] == [{"name": "general", "topic": "new topic"}, {"name": "random", "topic": ""}]
    assert [m["text"] for m in data["messages"]] == ["hello", "second"]


def test_add_file_part_with_inline_bytes(envhost):
    raw = base64.b64encode(json.dumps(SEED).encode()).decode()
    part = FilePart(file=FileWithBytes(bytes=raw, mimeType="application/json", name="seed.json"))
    run(env_client.add_data(envhost.base_url, [part]))
    assert [c["name"] for c in state(envhost)["channels"]] == ["general", "random"]


def test_add_file_part_with_a_file_uri_under_the_data_root(envhost, data_root):
    path = data_root / "seed-under-root.json"
    path.write_text(json.dumps(SEED))
    run(env_client.add_data(envhost.base_url, [FilePart(file=FileWithUri(uri=path.as_uri(), name=path.name))]))
    assert len(messages_of(envhost)) == 1


def test_add_file_part_outside_the_data_roots_is_refused_and_applies_nothing(envhost, outside_root):
    path = outside_root / "seed-outside.json"
    path.write_text(json.dumps(SEED))
    with pytest.raises(RuntimeError, match="add_failed"):
        run(env_client.add_data(envhost.base_url, [FilePart(file=FileWithUri(uri=path.as_uri()))]))
    reply = rpc(envhost, "data/add", {"parts": [{"kind": "file", "file": {"uri": path.as_uri()}}]})
    assert reply["error"]["code"] == -32000 and reply["error"]["data"] == {"code": "add_failed"}
    assert "outside the allowed data roots" in reply["error"]["message"]
    assert state(envhost) == {"channels": [], "messages": []}


def test_a_file_escaping_the_data_root_through_a_symlink_is_refused(envhost, data_root, outside_root):
    secret = outside_root / "secret.json"
    secret.write_text(json.dumps(SEED))
    link = data_root / "link-to-secret.json"
    if not link.exists():
        os.symlink(secret, link)
    reply = rpc(envhost, "data/add", {"parts": [{"kind": "file", "file": {"uri": link.as_uri()}}]})
    assert reply["error"]["data"] == {"code": "add_failed"}, reply
    assert state(envhost) == {"channels": [], "messages": []}


@pytest.fixture(scope="module")
def symlinked_root_server(pool, envhost_server, tmp_path_factory):
    """envhost (the implementation of `envhost_server`) with a --data-root given as a symlink to
    the real directory (as /tmp is on macOS, or a volume mounted through a link)."""
    real = tmp_path_factory.mktemp("real-data-root")
    link = real.parent / f"{real.name}-link"
    link.symlink_to(real, target_is_directory=True)
    server = pool.slack(envhost_server.implementation, "--data-root", str(link), label="envhost-symlinked-root")
    return server, link


def test_a_file_under_a_data_root_given_through_a_symlink_is_accepted(symlinked_root_server):
    """BUG (envhost): the data roots are canonicalized but the file:// path is not, so every file
    under a root given through a symlink is refused as 'outside the allowed data roots (<that very
    root>)'."""
    server, link = symlinked_root_server
    path = link / "seed.json"
    path.write_text(json.dumps(SEED))
    reply = rpc(server, "data/add", {"parts": [{"kind": "file", "file": {"uri": path.as_uri()}}]})
    assert reply == {"jsonrpc": "2.0", "id": 1, "result": {}}, (
        f"file {path} lies under --data-root {link} but was refused: {reply}")


def test_add_file_part_with_an_http_uri(envhost, file_server):
    url = file_server.put("seed.json", SEED)
    run(env_client.add_data(envhost.base_url, [FilePart(file=FileWithUri(uri=url))]))
    assert state(envhost)["messages"] == [message("general", "hello", "alice", "bob")]


def test_add_file_part_with_an_http_uri_that_answers_404_fails(envhost, file_server):
    with pytest.raises(RuntimeError, match="add_failed"):
        run(env_client.add_data(envhost.base_url, [FilePart(file=FileWithUri(uri=f"{file_server.base_url}/missing.json"))]))


def test_add_is_all_or_nothing_over_the_request(envhost):
    bad = DataPart(data={"messages": [{"channel": "nowhere", "text": "x"}]})
    with pytest.raises(RuntimeError, match="unknown channel 'nowhere'"):
        run(env_client.add_data(envhost.base_url, [DataPart(data=SEED), bad]))
    assert state(envhost) == {"channels": [], "messages": []}


def test_a_message_may_name_a_channel_added_earlier_in_the_same_request(envhost):
    run(env_client.add_data(envhost.base_url, [
        DataPart(data={"channels": [{"name": "fresh"}]}),
        DataPart(data={"messages": [{"channel": "fresh", "text": "first"}]}),
    ]))
    assert messages_of(envhost) == [message("fresh", "first")]


# ==================================================================== extensions: invoke_extension

def test_invoke_extension_runs_the_first_method_get(envhost):
    seed(envhost, **SEED)
    card = run(env_client.get_card(envhost.base_url))
    assert run(env_client.invoke_extension(envhost.base_url, card, STATS_URI)) == {"channels": 2, "messages": 1}


def test_invoke_extension_set_topic_changes_the_topic(envhost):
    seed(envhost, **SEED)
    card = run(env_client.get_card(envhost.base_url))
    answer = run(env_client.invoke_extension(envhost.base_url, card, STATS_URI,
                                             {"channel": "random", "topic": "cats"}, method="set-topic"))
    assert answer == {"name": "random", "topic": "cats"}
    assert state(envhost)["channels"][1] == {"name": "random", "topic": "cats"}


def test_invoke_extension_unknown_channel_raises_a_coded_404(envhost):
    card = run(env_client.get_card(envhost.base_url))
    with pytest.raises(ExtensionCallError) as caught:
        run(env_client.invoke_extension(envhost.base_url, card, STATS_URI,
                                        {"channel": "nope", "topic": "x"}, method="set-topic"))
    error = caught.value
    assert error.response.status_code == 404
    assert (error.code, error.applied, error.retryable, error.hint) == ("channel_not_found", "no", False, None)
    assert error.detail == "no channel named 'nope'"
    assert str(error) == "404 channel_not_found: no channel named 'nope'"


def test_invoke_extension_with_a_missing_argument_is_invalid_params(envhost):
    card = run(env_client.get_card(envhost.base_url))
    with pytest.raises(ExtensionCallError) as caught:
        run(env_client.invoke_extension(envhost.base_url, card, STATS_URI, {"channel": "x"}, method="set-topic"))
    assert caught.value.response.status_code == 400
    assert (caught.value.code, caught.value.applied) == ("invalid_params", "no")
    assert caught.value.detail == "missing a required argument: 'topic'"


# ==================================================================== MCP: agentenv_protocol.ToolSession

async def _tool_names(server, role=None) -> list[str]:
    async with ToolSession(mcp_url=server.mcp_url, role=role) as session:
        return [t.name for t in await session.list_tools()]


def test_tool_session_lists_the_visible_tools_in_order(envhost):
    assert run(_tool_names(envhost)) == VISIBLE


def test_tool_session_lists_schemas_with_every_parameter(envhost):
    async def schemas():
        async with ToolSession(mcp_url=envhost.mcp_url) as session:
            return {t.name: t.inputSchema for t in await session.list_tools()}
    send = run(schemas())[SEND]
    assert set(send["properties"]) == {"channel", "text", "to"}
    assert sorted(send["required"]) == ["channel", "text"]


def test_tool_session_calls_tools(envhost):
    seed(envhost, channels=[{"name": "general"}])

    async def calls():
        async with ToolSession(mcp_url=envhost.mcp_url) as session:
            sent = await session.call_tool(SEND, {"channel": "general", "text": "hi"})
            listed = await session.call_tool(CHANNELS)
            return sent, listed
    sent, listed = run(calls())
    assert (sent.isError, sent.text) == (False, "ok")
    assert listed.isError is False
    assert json.loads(listed.text) == {"name": "general", "topic": ""}
    assert messages_of(envhost) == [message("general", "hi")]


def test_tool_session_role_is_the_sender_and_selects_the_inbox(envhost):
    seed(envhost, channels=[{"name": "general"}])

    async def exchange():
        async with ToolSession(mcp_url=envhost.mcp_url, role="alice") as alice:
            await alice.call_tool(SEND, {"channel": "general", "text": "for bob", "to": "bob"})
            await alice.call_tool(SEND, {"channel": "general", "text": "for all"})
            alice_inbox = await alice.call_tool(INBOX)
        async with ToolSession(mcp_url=envhost.mcp_url, role="bob") as bob:
            bob_inbox = await bob.call_tool(INBOX)
        async with ToolSession(mcp_url=envhost.mcp_url) as anonymous:
            anonymous_inbox = await anonymous.call_tool(INBOX)
        return alice_inbox, bob_inbox, anonymous_inbox
    alice_inbox, bob_inbox, anonymous_inbox = run(exchange())
    assert messages_of(envhost) == [message("general", "for bob", "alice", "bob"),
                                    message("general", "for all", "alice")]
    assert (alice_inbox.isError, alice_inbox.content) == (False, [])
    assert [json.loads(b["text"]) for b in bob_inbox.content] == [message("general", "for bob", "alice", "bob")]
    assert (anonymous_inbox.isError, anonymous_inbox.content) == (False, [])


def test_tool_session_role_default_is_no_role(envhost):
    seed(envhost, channels=[{"name": "general"}])

    async def send():
        async with ToolSession(mcp_url=envhost.mcp_url, role="default") as session:
            return await session.call_tool(SEND, {"channel": "general", "text": "x"})
    assert run(send()).text == "ok"
    assert messages_of(envhost) == [message("general", "x")]


def test_tool_session_concurrent_calls_on_one_session_are_all_answered(envhost):
    seed(envhost, channels=[{"name": "general"}])
    texts = [f"message {i}" for i in range(24)]

    async def burst():
        async with ToolSession(mcp_url=envhost.mcp_url, role="burst", timeout=60) as session:
            sends = [session.call_tool(SEND, {"channel": "general", "text": t}) for t in texts]
            lists = [session.call_tool(CHANNELS) for _ in range(8)]
            return await asyncio.gather(*sends, *lists)
    results = run(burst())
    assert [r.text for r in results[:len(texts)]] == ["ok"] * len(texts)
    assert all(not r.isError and json.loads(r.text)["name"] == "general" for r in results[len(texts):])
    assert sorted(m["text"] for m in messages_of(envhost)) == sorted(texts)
    assert {m["from"] for m in messages_of(envhost)} == {"burst"}


def test_tool_session_unknown_tool_is_an_error_result(envhost):
    async def call():
        async with ToolSession(mcp_url=envhost.mcp_url) as session:
            return await session.call_tool("slack_nope")
    result = run(call())
    assert (result.isError, result.text) == (True, "Unknown tool: slack_nope")


def test_tool_session_reports_a_session_the_server_ended(envhost):
    async def use_after_delete():
        async with ToolSession(mcp_url=envhost.mcp_url) as session:
            ended = httpx.delete(envhost.mcp_url, headers={"mcp-session-id": session.session_id})
            assert ended.status_code < 300, ended.text
            with pytest.raises(ToolSessionError, match="no longer knows session"):
                await session.list_tools()
    run(use_after_delete())


# ==================================================================== MCP: the official mcp client

async def _with_mcp(server, action, headers=None):
    async with streamablehttp_client(server.mcp_url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            return init, await action(session)


def test_mcp_client_initializes_with_the_card_name(envhost):
    init, _ = run(_with_mcp(envhost, lambda s: s.send_ping()))
    assert init.serverInfo.name == "slack"
    assert init.capabilities.tools is not None


def test_mcp_client_lists_exactly_the_three_visible_tools(envhost):
    _, listed = run(_with_mcp(envhost, lambda s: s.list_tools()))
    assert [t.name for t in listed.tools] == VISIBLE
    channels = listed.tools[0]
    assert channels.annotations is not None and channels.annotations.readOnlyHint is True
    assert all(t.outputSchema is not None for t in listed.tools)


def test_mcp_client_call_results_carry_structured_content(envhost):
    seed(envhost, channels=[{"name": "general", "topic": "t"}])

    async def calls(session):
        return (await session.call_tool(SEND, {"channel": "general", "text": "hey"}),
                await session.call_tool(CHANNELS, {}))
    _, (sent, listed) = run(_with_mcp(envhost, calls))
    assert sent.isError is False
    assert [(c.type, c.text) for c in sent.content] == [("text", "ok")]
    assert sent.structuredContent == {"result": "ok"}
    assert listed.isError is False
    assert listed.structuredContent == {"result": [{"name": "general", "topic": "t"}]}


def test_mcp_client_coded_error_is_an_error_result_with_structured_content(envhost):
    _, result = run(_with_mcp(envhost, lambda s: s.call_tool(SEND, {"channel": "nowhere", "text": "x"})))
    assert result.isError is True
    assert [c.text for c in result.content] == ["channel_not_found: no channel named 'nowhere'"]
    assert result.structuredContent == {
        "code": "channel_not_found", "message": "no channel named 'nowhere'", "retryable": False,
        "applied": "no", "hint": "list the channels with the list_channels tool"}


def test_mcp_client_unknown_tool(envhost):
    _, result = run(_with_mcp(envhost, lambda s: s.call_tool("slack_nope", {})))
    assert result.isError is True
    assert [c.text for c in result.content] == ["Unknown tool: slack_nope"]
    assert result.structuredContent is None


@pytest.mark.parametrize("arguments", [
    {"channel": "general"},                        # missing required
    {"channel": 5, "text": "x"},                   # wrong type
    {"channel": "general", "text": "x", "to": 3},  # wrong type of an optional
], ids=["missing", "wrong-type", "wrong-optional-type"])
def test_mcp_client_bad_arguments_are_an_error_result(envhost, arguments):
    seed(envhost, channels=[{"name": "general"}])
    _, result = run(_with_mcp(envhost, lambda s: s.call_tool(SEND, arguments)))
    assert result.isError is True and result.structuredContent is None
    assert result.content[0].text.startswith(f"Error executing tool {SEND}: ")
    assert messages_of(envhost) == []


def test_mcp_client_role_header_is_the_sender(envhost):
    seed(envhost, channels=[{"name": "general"}])
    run(_with_mcp(envhost, lambda s: s.call_tool(SEND, {"channel": "general", "text": "x"}),
                  headers={"AgentEnv-Role": "carol"}))
    assert messages_of(envhost) == [message("general", "x", "carol")]


@pytest.mark.parametrize("meta, sender", [
    ({ROLE_META: "grader"}, "grader"),              # a forwarded role wins over the header
    ({ROLE_META: "default"}, None),                 # ... even when it is "no role"
    ({ROLE_META: "  spaced  "}, "spaced"),          # normalised
    ({SESSION_META: "S1"}, "header-role"),          # no role key: the header decides
    (None, "header-role"),
], ids=["meta-role", "meta-default", "meta-spaced", "session-only", "no-meta"])
def test_mcp_client_meta_role_takes_precedence_over_the_header(envhost, meta, sender):
    seed(envhost, channels=[{"name": "general"}])
    run(_with_mcp(envhost, lambda s: s.call_tool(SEND, {"channel": "general", "text": "x"}, meta=meta),
                  headers={"AgentEnv-Role": "header-role"}))
    assert messages_of(envhost) == [message("general", "x", sender)]


# The mcp client drops null values from _meta, so these go out raw.
@pytest.mark.parametrize("meta, sender", [
    ({ROLE_META: None}, None),
    ({ROLE_META: 5}, None),
    ({ROLE_META: ""}, None),
    ({ROLE_META: None, SESSION_META: "S1"}, None),
], ids=["null", "number", "empty", "null-with-session"])
def test_any_meta_role_value_overrides_the_header(envhost, meta, sender):
    seed(envhost, channels=[{"name": "general"}])
    with McpSession(envhost, role="header-role") as session:
        assert session.call(SEND, {"channel": "general", "text": "x"}, meta=meta)["isError"] is False
    assert messages_of(envhost) == [message("general", "x", sender)]


def test_mcp_client_ends_its_session_cleanly(envhost, caplog):
    """The mcp client sends DELETE on close and warns unless the answer is 200 or 204 (or 405);
    the reference answers 200 (protocol.md#sessions)."""
    run(_with_mcp(envhost, lambda s: s.send_ping()))
    failures = [r.getMessage() for r in caplog.records if "Session termination failed" in r.getMessage()]
    assert failures == []


def test_meta_role_selects_the_tools_list_in_tool_access_mode(envhost):
    assert tool_access(envhost, "enable", {"role": "grader", "tools": [PURGE]}).status_code == 200
    with McpSession(envhost, role="agent") as session:
        assert session.tool_names() == VISIBLE
        assert session.tool_names(meta={ROLE_META: "grader"}) == [PURGE, *VISIBLE]
        assert session.tool_names(meta={ROLE_META: "default"}) == VISIBLE
        assert session.tool_names(headers={"AgentEnv-Role": "grader"}) == [PURGE, *VISIBLE]


# ==================================================================== tool access (protocol.md#tool-access)

TOOL_LETTERS = {"a": CHANNELS, "b": SEND, "c": INBOX, "h": PURGE}


def _names(letters) -> list[str] | str:
    return letters if letters == "*" else [TOOL_LETTERS[x] for x in letters]


def _visible(letters: str) -> list[str]:
    return [name for name in [PURGE, *VISIBLE] if name in _names(letters)]


# protocol.md#worked-example with a=list_channels, b=send_message, h=admin_purge (hidden) and c=list_inbox, which no
# step names (so it follows the `*` rules). Visible letters per caller role: default, agent, grader.
WORKED_SEQUENCE = [
    (None, None, None, None, ("abc", "abc", "abc")),
    ("disable", "agent", "b", ("b", ""), ("abc", "ac", "abc")),
    ("enable", "grader", "h", ("", "h"), ("abc", "ac", "abch")),
    ("disable", "*", "*", ("*", ""), ("", "", "")),
    ("enable", "agent", "*", ("", "*"), ("", "abc", "")),
    ("enable", "*", "h", ("*", "h"), ("h", "abch", "h")),
    ("disable", "agent", "ha", ("ah", "*"), ("h", "bc", "h")),
    ("enable", "*", "*", ("", "*"), ("abc", "abc", "abc")),
    ("disable", "default", "a", ("a", ""), ("bc", "abc", "abc")),
    ("disable", "*", "b", ("b", "*"), ("c", "ac", "ac")),
]


def _rule_names(letters: str) -> list[str]:
    return sorted("*" if x == "*" else TOOL_LETTERS[x] for x in letters)


def test_tool_access_worked_sequence(envhost):
    """protocol.md#worked-example, step by step: each answer, then tools/list for a caller of each role."""
    rpc(envhost, "data/reset", {})
    for step, (verb, role, tools, answer, visible) in enumerate(WORKED_SEQUENCE):
        if verb is not None:
            response = tool_access(envhost, verb, {"role": role, "tools": _names(tools)})
            assert response.status_code == 200, (step, response.text)
            disabled, allowed = answer
            assert response.json() == {"role": role, "disabled": _rule_names(disabled),
                                       "allowed": _rule_names(allowed)}, step
        for caller, letters in zip((None, "agent", "grader"), visible):
            assert visible_tools(envhost, caller) == _visible(letters), (step, caller)


def test_a_hidden_tool_granted_to_a_role_is_listed_with_its_meta_and_callable(envhost):
    seed(envhost, channels=[{"name": "general"}],
         messages=[{"channel": "general", "text": "a"}, {"channel": "general", "text": "b"}])
    assert tool_access(envhost, "enable", {"role": "admin", "tools": [PURGE]}).json() == {
        "role": "admin", "disabled": [], "allowed": [PURGE]}
    with McpSession(envhost, role="admin") as admin:
        listed = admin.result("tools/list")["tools"]
        assert listed[0]["name"] == PURGE and listed[0]["_meta"] == {HIDDEN_META: True}
        result = admin.call(PURGE, {"channel": "general"})
    assert result == {"content": [{"type": "text", "text": "2"}], "structuredContent": {"result": 2}, "isError": False}
    assert messages_of(envhost) == []


def test_a_disabled_tool_call_is_refused_with_permission_denied(envhost):
    seed(envhost, channels=[{"name": "general"}])
    tool_access(envhost, "disable", {"role": "agent", "tools": [SEND]})
    with McpSession(envhost, role="agent") as agent:
        refused = agent.call(SEND, {"channel": "general", "text": "x"})
    message_text = f"Tool '{SEND}' is disabled for role 'agent'"
    assert refused == {
        "content": [{"type": "text", "text": f"permission_denied: {message_text}"}],
        "structuredContent": {"code": "permission_denied", "message": message_text, "retryable": False, "applied": "no"},
        "isError": True}
    assert messages_of(envhost) == []


def test_a_hidden_tool_is_refused_for_the_default_role(envhost):
    with McpSession(envhost) as session:
        refused = session.call(PURGE, {"channel": "general"})
    assert refused["isError"] is True
    assert refused["structuredContent"]["message"] == f"Tool '{PURGE}' is disabled for role 'default'"


def test_data_reset_keeps_the_tool_access_rules(envhost):
    tool_access(envhost, "disable", {"role": "agent", "tools": [SEND]})
    rpc(envhost, "data/reset", {})
    assert visible_tools(envhost, "agent") == [CHANNELS, INBOX]


@pytest.mark.parametrize("body, message_text", [
    (b"not json", "request body must be JSON"),
    (b"", "missing or invalid 'role' field"),
    (b"[1]", "missing or invalid 'role' field"),
    (b'{"tools": "*"}', "missing or invalid 'role' field"),
    (b'{"role": "", "tools": "*"}', "missing or invalid 'role' field"),
    (b'{"role": 5, "tools": "*"}', "missing or invalid 'role' field"),
    (b'{"role": "a", "tools": "x"}', "'tools' must be a list of strings or the string '*'"),
    (b'{"role": "a", "tools": [1]}', "'tools' must be a list of strings or the string '*'"),
    (b'{"role": "a"}', "'tools' must be a list of strings or the string '*'"),
], ids=["not-json", "empty", "array", "no-role", "empty-role", "number-role", "tools-string", "tools-numbers",
        "no-tools"])
@pytest.mark.parametrize("verb", ["enable", "disable"])
def test_tool_access_rejects_bad_bodies(envhost, verb, body, message_text):
    response = tool_access(envhost, verb, body)
    assert response.status_code == 400
    assert response.json() == {"ok": False, "error": {
        "code": "invalid_params", "message": message_text, "retryable": False, "applied": "no"}}


# ==================================================================== ENVIRONMENT_NAME renames

@pytest.fixture
def chat(envhost_chat):
    reset_state(envhost_chat)
    return envhost_chat


def test_environment_name_renames_the_card_and_every_tool(chat):
    card = run(env_client.get_card(chat.base_url))
    assert card["name"] == "chat"
    assert [t["name"] for t in card["capabilities"]["tools"]] == [
        "chat_admin_purge", "chat_list_channels", "chat_list_inbox", "chat_send_message"]
    assert run(_tool_names(chat)) == ["chat_list_channels", "chat_list_inbox", "chat_send_message"]


def test_renamed_tools_are_served_under_their_new_names_only(chat):
    seed(chat, channels=[{"name": "general"}])
    with McpSession(chat, role="x") as session:
        assert session.call("chat_send_message", {"channel": "general", "text": "hi"})["isError"] is False
        assert session.call(SEND, {"channel": "general", "text": "hi"})["content"] == [
            {"type": "text", "text": f"Unknown tool: {SEND}"}]
        assert session.initialize_result["serverInfo"]["name"] == "chat"
    assert messages_of(chat) == [message("general", "hi", "x")]


# ==================================================================== raw HTTP: the data-plane envelope (protocol.md#envelope)

@pytest.mark.parametrize("body, reply", [
    (b"{not json", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error", "data": {
        "detail": "the body is not JSON: key must be a string at line 1 column 2"}}}),
    (b"", {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request", "data": {
        "detail": "the body is empty: send one JSON-RPC 2.0 request object"}}}),
    (b"[1, 2]", {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request", "data": {
        "detail": "the body is a JSON array: batches are not served; send one request object"}}}),
    (b'{"jsonrpc": "1.0", "id": 7, "method": "data/get"}',
     {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "invalid request", "data": {
         "detail": '`jsonrpc` is "1.0"; it must be "2.0"'}}}),
    (b'{"jsonrpc": "2.0", "id": "s", "params": {}}',
     {"jsonrpc": "2.0", "id": "s", "error": {"code": -32600, "message": "invalid request", "data": {
         "detail": "the request has no `method` member (data/reset, data/add or data/get)"}}}),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "data/nope"}',
     {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "method not found: data/nope"}}),
    (b'{"jsonrpc": "2.0", "id": 3, "method": ["data/get"]}',  # the SDK crashes here; envhost answers -32601
     {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": 'method not found: ["data/get"]'}}),
], ids=["parse-error", "empty", "array", "bad-version", "no-method", "unknown-method", "list-method"])
def test_envelope_errors(envhost, body, reply):
    response = rpc_post(envhost, body)
    assert response.status_code == 200
    assert response.json() == reply


@pytest.mark.parametrize("params", [{"parts": []}, {}, [1], {"parts": [{"kind": "nope"}]},
                                    {"parts": [{"kind": "data", "data": [1]}]}],
                         ids=["empty-parts", "no-parts", "not-an-object", "unknown-kind", "data-not-object"])
def test_invalid_add_params_are_minus_32602_invalid_request(envhost, params):
    reply = rpc(envhost, "data/add", params, id=9)
    assert reply["id"] == 9
    assert set(reply["error"]) == {"code", "message", "data"}
    assert (reply["error"]["code"], reply["error"]["message"]) == (-32602, "invalid_request")
    assert isinstance(reply["error"]["data"]["detail"], str) and reply["error"]["data"]["detail"]


def test_a_payload_error_is_minus_32000_add_failed(envhost):
    reply = rpc(envhost, "data/add", {"parts": [data_part(messages=[{"channel": "x", "text": "t"}])]})
    assert reply == {"jsonrpc": "2.0", "id": 1, "error": {
        "code": -32000, "message": "messages[0] names unknown channel 'x'", "data": {"code": "add_failed"}}}


def test_a_notification_is_answered_with_a_null_id(envhost):
    assert rpc_post(envhost, {"jsonrpc": "2.0", "method": "data/reset"}).json() == {
        "jsonrpc": "2.0", "id": None, "result": {}}


def test_ids_are_echoed_verbatim(envhost):
    for request_id in ["abc", 0, 2.5, None, {"nested": [1]}]:
        assert rpc(envhost, "data/reset", {}, id=request_id)["id"] == request_id


def test_data_plane_answers_are_encoded_like_the_sdk(envhost):
    seed(envhost, channels=[{"name": "é✓😀"}])
    response = rpc_post(envhost, {"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {}})
    assert response.headers["content-type"] == "application/json"
    assert response.content == (b'{"jsonrpc": "2.0", "id": 1, "result": {"parts": [{"kind": "data", "data": '
                                b'{"channels": [{"name": "\\u00e9\\u2713\\ud83d\\ude00", "topic": ""}], "messages": []}}]}}')


# ==================================================================== raw HTTP: MCP sessions, limits, readiness

def _mcp_post(server, message, headers=None) -> httpx.Response:
    return httpx.post(server.mcp_url, json=message,
                      headers={"Accept": MCP_ACCEPT, **(headers or {})}, timeout=30)


def test_mcp_unknown_session_id_is_404(envhost):
    response = _mcp_post(envhost, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         {"mcp-session-id": "0123456789abcdef0123456789abcdef"})
    assert response.status_code == 404


def test_mcp_request_without_a_session_id_is_400(envhost):
    response = _mcp_post(envhost, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 400


def test_mcp_ended_session_is_404(envhost):
    session = McpSession(envhost)
    assert session.client.delete("/mcp").status_code < 300
    response = session.post({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    session.client.close()
    assert response.status_code == 404


def test_mcp_initialize_answers_a_session_id_and_the_card_name(envhost):
    with McpSession(envhost) as session:
        assert len(session.session_id) >= 16
        assert session.initialize_result["serverInfo"]["name"] == "slack"
        assert session.initialize_result["protocolVersion"] == "2025-11-25"
        assert session.result("ping") == {}


def test_ready_answers_200(envhost):
    assert httpx.get(envhost.url("/ready")).status_code == 200


def test_card_is_served_to_head_too(envhost):
    response = httpx.head(envhost.url(CARD_PATH))
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"


@pytest.fixture(scope="module")
def small_body_envhost(pool, envhost_server):
    return pool.slack(envhost_server.implementation, "--max-body-bytes", "4096", label="envhost-small-body")


@pytest.fixture
def small_body_server(small_body_envhost):
    """envhost with --max-body-bytes 4096, reset."""
    reset_state(small_body_envhost)
    return small_body_envhost


def _padded_add(size: int) -> bytes:
    body = {"jsonrpc": "2.0", "id": 1, "method": "data/add",
            "params": {"parts": [data_part(channels=[{"name": "c", "topic": ""}])]}}
    raw = json.dumps(body).encode()
    body["params"]["parts"][0]["data"]["channels"][0]["topic"] = "x" * (size - len(raw))
    return json.dumps(body).encode()


def test_a_body_over_max_body_bytes_is_413(small_body_server):
    big = _padded_add(8192)
    assert len(big) == 8192
    assert rpc_post(small_body_server, big).status_code == 413
    assert state(small_body_server)["channels"] == []


def test_a_body_within_max_body_bytes_is_served(small_body_server):
    fits = _padded_add(4000)
    response = rpc_post(small_body_server, fits)
    assert response.status_code == 200 and response.json()["result"] == {}
    assert len(state(small_body_server)["channels"][0]["topic"]) > 3000


def test_an_mcp_body_over_max_body_bytes_is_413(small_body_server):
    with McpSession(small_body_server) as session:
        response = session.post({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                                 "params": {"name": SEND, "arguments": {"channel": "c", "text": "x" * 8192}}})
    assert response.status_code == 413


def test_an_extension_body_over_max_body_bytes_is_413(small_body_server):
    response = httpx.post(small_body_server.url(f"{STATS_PATH}/set-topic"),
                          json={"channel": "c", "topic": "x" * 8192})
    assert response.status_code == 413
