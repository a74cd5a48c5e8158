"""`envhost serve counter-c.wasm`: the counter environment written in C (guests/counter-c, built
by `make guests-c` with Debian's clang and wasi-libc), driven through its card, the official MCP
Python client, the agentenv data-plane client and raw JSON-RPC, on the root episode and on an
episode created with POST /episodes."""
from __future__ import annotations

import base64
import dataclasses
import json

import httpx
import pytest
from agentenv_protocol import DataPart, FilePart, TextPart
from agentenv_protocol import client as env_client
from agentenv_protocol.types import FileWithBytes, FileWithUri
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from conftest import CARD_PATH, GUEST_RELEASE, ROLE_META, McpSession, build, rpc, run

# As in test_clients.py: the brief is the official client's `streamablehttp_client`.
pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")

COUNTER_C_WASM = GUEST_RELEASE / "counter-c.wasm"
ADD, COUNTS = "counter-c_add", "counter-c_counts"
INT64_MAX = 2**63 - 1


@pytest.fixture(scope="module")
def counter_c_wasm():
    """counter-c.wasm, built by `make guests-c` (quick when up to date)."""
    build(["make", "guests-c"])
    return COUNTER_C_WASM


@pytest.fixture(scope="module")
def counter_c_server(pool, counter_c_wasm, data_root):
    """`envhost serve counter-c.wasm`, shared by this module."""
    return pool.envhost(counter_c_wasm, "--data-root", str(data_root), label="envhost-counter-c")


@pytest.fixture(params=["root", "episode"])
def counter_c(request, counter_c_server):
    """A counter-c episode with no counters: the server's root episode (reset), or a new episode
    served under /episodes/{id}/ (deleted after)."""
    if request.param == "root":
        assert rpc(counter_c_server, "data/reset", {})["result"] == {}
        yield counter_c_server
        return
    created = httpx.post(counter_c_server.url("/episodes"), json={"environment": "counter-c"})
    assert created.status_code == 201, created.text
    answer = created.json()
    yield dataclasses.replace(counter_c_server, label=f"{counter_c_server.label}-episode",
                              base_url=counter_c_server.url(answer["url"].rstrip("/")))
    httpx.delete(counter_c_server.url(f"/episodes/{answer['id']}"))


async def _with_mcp(server, action, role=None):
    """Runs `action(session)` in an official-client MCP session, as `role` when given."""
    headers = {"AgentEnv-Role": role} if role is not None else None
    async with streamablehttp_client(server.mcp_url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            return init, await action(session)


def _call(server, name, arguments, role=None):
    """One tools/call through the official client; answers its CallToolResult."""
    return run(_with_mcp(server, lambda s: s.call_tool(name, arguments), role))[1]


def counts_of(server) -> dict:
    """The counters, as data/get answers them."""
    parts = rpc(server, "data/get", {})["result"]["parts"]
    assert len(parts) == 1 and parts[0]["kind"] == "data", parts
    return parts[0]["data"]["counts"]


def seed(server, counts: dict) -> None:
    assert rpc(server, "data/add", {"parts": [{"kind": "data", "data": {"counts": counts}}]})["result"] == {}


# ==================================================================== card and tools/list

def test_card_names_the_c_environment_its_tools_and_operations(counter_c):
    card = httpx.get(counter_c.url(CARD_PATH)).json()
    assert card["name"] == "counter-c"
    assert card["capabilities"]["operations"] == ["data/reset", "data/add", "data/get"]
    assert card["capabilities"]["tools"] == [
        {"name": ADD, "description": "Add to the caller's counter; answers the new value.",
         "inputSchema": {"type": "object", "properties": {"by": {
             "type": "integer", "description": "How much to add (may be negative)."}}, "required": ["by"]}},
        {"name": COUNTS, "description": "Every role's counter.",
         "inputSchema": {"type": "object", "properties": {}}},
    ]


def test_mcp_client_initializes_and_lists_both_tools_with_schemas_and_annotations(counter_c):
    init, listed = run(_with_mcp(counter_c, lambda s: s.list_tools()))
    assert init.serverInfo.name == "counter-c"
    add, counts = listed.tools
    assert (add.name, counts.name) == (ADD, COUNTS)
    assert add.outputSchema == {"type": "object", "properties": {"result": {"type": "integer"}},
                                "required": ["result"]}
    assert add.annotations is None
    assert counts.outputSchema == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert counts.annotations is not None and counts.annotations.readOnlyHint is True


def test_the_environment_name_renames_the_c_tools(pool, counter_c_wasm):
    server = pool.envhost(counter_c_wasm, "--name", "tally", label="envhost-counter-c-tally")
    _, listed = run(_with_mcp(server, lambda s: s.list_tools()))
    assert [t.name for t in listed.tools] == ["tally_add", "tally_counts"]
    assert _call(server, "tally_add", {"by": 2}).structuredContent == {"result": 2}


# ==================================================================== tool calls

def test_add_counts_per_caller_role(counter_c):
    async def calls(session):
        return [await session.call_tool(ADD, {"by": by}) for by in (5, -2)]
    _, (first, second) = run(_with_mcp(counter_c, calls, role="alice"))
    assert [(c.type, c.text) for c in first.content] == [("text", "5")]
    assert first.structuredContent == {"result": 5} and first.isError is False
    assert second.structuredContent == {"result": 3}
    assert _call(counter_c, ADD, {"by": 1}, role="bob").structuredContent == {"result": 1}
    assert _call(counter_c, ADD, {"by": -7}).structuredContent == {"result": -7}
    counts = _call(counter_c, COUNTS, {})
    assert counts.isError is False
    assert counts.structuredContent == {"alice": 3, "bob": 1, "default": -7}
    assert json.loads(counts.content[0].text) == counts.structuredContent
    assert counts_of(counter_c) == {"alice": 3, "bob": 1, "default": -7}


def test_a_meta_role_with_escapes_and_non_ascii_round_trips(counter_c):
    role = 'é"\\\t😀'  # the host trims a role's outer whitespace, not inner
    with McpSession(counter_c) as session:
        added = session.call(ADD, {"by": 4}, meta={ROLE_META: role})
        assert added == {"content": [{"type": "text", "text": "4"}], "structuredContent": {"result": 4},
                         "isError": False}
        assert session.call(COUNTS)["structuredContent"] == {role: 4}
    assert counts_of(counter_c) == {role: 4}


def test_overflow_is_a_coded_error_and_changes_nothing(counter_c):
    seed(counter_c, {"alice": INT64_MAX})
    result = _call(counter_c, ADD, {"by": 1}, role="alice")
    assert result.isError is True
    assert [c.text for c in result.content] == ["overflow: the counter would overflow"]
    assert result.structuredContent == {"code": "overflow", "message": "the counter would overflow",
                                        "retryable": False, "applied": "no"}
    assert counts_of(counter_c) == {"alice": INT64_MAX}


def test_an_integer_beyond_64_bits_is_a_coded_error_from_the_guest(counter_c):
    result = _call(counter_c, ADD, {"by": 2**64})
    assert result.isError is True
    assert result.structuredContent["code"] == "invalid_arguments"
    assert counts_of(counter_c) == {}


def test_arguments_failing_the_schema_are_refused_by_the_host(counter_c):
    result = _call(counter_c, ADD, {"by": "x"})
    assert result.isError is True
    assert result.content[0].text.startswith(f"Error executing tool {ADD}: ")
    assert counts_of(counter_c) == {}


# ==================================================================== data plane

def test_add_data_takes_data_parts_and_json_files_and_ignores_text(counter_c, data_root):
    path = data_root / "counter-c-seed.json"
    path.write_text(json.dumps({"counts": {"carol": 9}}))
    inline = base64.b64encode(json.dumps({"counts": {"bob": 2}}).encode()).decode()
    run(env_client.add_data(counter_c.base_url, [
        DataPart(data={"counts": {"alice": 1, "bob": 1}, "ignored": [1, {"x": None}]}),
        FilePart(file=FileWithBytes(bytes=inline, mimeType="application/json", name="bob.json")),
        FilePart(file=FileWithUri(uri=path.as_uri(), name=path.name)),
        TextPart(text="not a counter"),
    ]))
    got = run(env_client.get_data(counter_c.base_url))
    assert [p.model_dump(exclude_none=True) for p in got.parts] == [
        {"kind": "data", "data": {"counts": {"alice": 1, "bob": 2, "carol": 9}}}]
    assert _call(counter_c, ADD, {"by": 1}, role="carol").structuredContent == {"result": 10}


def test_add_data_sets_counters_and_reset_forgets_them(counter_c):
    _call(counter_c, ADD, {"by": 3}, role="alice")
    seed(counter_c, {"alice": 10, "zed": -1})
    assert counts_of(counter_c) == {"alice": 10, "zed": -1}
    run(env_client.reset_data(counter_c.base_url))
    assert counts_of(counter_c) == {}


@pytest.mark.parametrize("bad", [
    {"kind": "data", "data": {"counts": {"x": "y"}}},
    {"kind": "data", "data": {"counts": [1]}},
    {"kind": "data", "data": {"counts": {"x": 1.5}}},
    {"kind": "data", "data": {"counts": {"x": 2**63}}},
    {"kind": "file", "file": {"bytes": base64.b64encode(b"not json").decode()}},
], ids=["string", "array", "fraction", "too-big", "file-not-json"])
def test_a_bad_part_fails_the_whole_add_with_a_coded_error(counter_c, bad):
    seed(counter_c, {"alice": 1})
    reply = rpc(counter_c, "data/add", {"parts": [{"kind": "data", "data": {"counts": {"bob": 2}}}, bad]})
    assert reply["error"] == {"code": -32000, "message": "part 1 is not a counts document",
                              "data": {"code": "add_failed"}}
    assert counts_of(counter_c) == {"alice": 1}


def test_episodes_of_the_c_environment_are_isolated(counter_c_server):
    created = [httpx.post(counter_c_server.url("/episodes"), json={"environment": "counter-c"}).json()
               for _ in range(2)]
    first, second = (counter_c_server.url(c["url"].rstrip("/")) for c in created)
    seed(first, {"alice": 1})
    assert counts_of(first) == {"alice": 1}
    assert counts_of(second) == {}
    for c in created:
        assert httpx.delete(counter_c_server.url(f"/episodes/{c['id']}")).status_code < 300
