"""Environments written for the reference SDK (tests/reference-ports/NAME/reference.py), ported to
envhost's Python SDK by changing their imports only (python/NAME.py), served side by side with the
reference serving the original: the cards are the same bytes, and tools/list, tool calls (hooks,
hidden tools, verbatim image results, coded errors), extensions with their params, tool access and
the data plane answer the same."""
from __future__ import annotations

import json
import re
import sys

import httpx
import pytest

from conftest import CARD_PATH, GUEST_RELEASE, REPO, McpSession, free_port, rpc

PORTS = REPO / "tests" / "reference-ports"
IMPORT = re.compile(r"^(from \S+ import \(?|import \S+)")


def code_lines(path) -> list[str]:
    """The file's non-blank lines but its imports (a parenthesised import's names included)."""
    lines, in_import = [], False
    for line in path.read_text().splitlines():
        if in_import:
            in_import = not line.startswith(")")
            continue
        if IMPORT.match(line):
            in_import = line.endswith("(")
            continue
        if line.strip():
            lines.append(line)
    return lines


@pytest.fixture(scope="module")
def tickets(pool):
    """(the reference serving the original, envhost serving the port)."""
    port = free_port()
    env = {"ENVIRONMENT_NAME": "", "MCP_HOST": "127.0.0.1", "MCP_PORT": str(port)}
    reference = pool._launch("reference-tickets", [sys.executable, str(PORTS / "tickets" / "reference.py")],
                             env, port, CARD_PATH)
    ported = pool.envhost(GUEST_RELEASE / "tickets-py.wasm", label="tickets-py")
    return reference, ported


def both(pair, ask):
    return [ask(server.base_url) for server in pair]


def test_the_port_changes_imports_only():
    original = PORTS / "tickets" / "reference.py"
    port = PORTS / "tickets" / "python" / "tickets.py"
    assert code_lines(original) == code_lines(port)


def test_the_cards_are_the_same_bytes(tickets):
    reference, ported = both(tickets, lambda base: httpx.get(base + CARD_PATH, timeout=10).content)
    assert ported == reference


@pytest.mark.parametrize("role", [None, "alice", "viewer"])
def test_tools_list_is_the_same(tickets, role):
    def listed(base):
        with McpSession(base, role=role) as session:
            return session.result("tools/list")

    reference, ported = both(tickets, listed)
    assert ported == reference


def test_calls_hooks_hidden_tools_images_extensions_and_the_data_plane_answer_the_same(tickets):
    def story(base):
        said = [rpc(base, "data/reset", {}),
                rpc(base, "data/add", {"parts": [{"kind": "data", "data": {
                    "tickets": [{"title": "printer", "priority": 2}, {"title": "vpn"}]}}]}),
                rpc(base, "data/add", {"parts": [{"kind": "text", "text": "no"}]})]
        with McpSession(base, role="alice") as alice:
            said += [alice.call("tickets_open", {"title": "coffee", "priority": 1}),
                     alice.call("tickets_open", {"title": "x", "priority": 9}),
                     alice.call("tickets_queue"), alice.call("tickets_chart"),
                     alice.call("tickets_escalate", {"ticket": 1})]
            enabled = httpx.post(base + "/tools/enable", json={"role": "alice", "tools": ["tickets_escalate"]})
            said += [enabled.status_code, enabled.json(), alice.call("tickets_escalate", {"ticket": 2}),
                     alice.call("tickets_escalate", {"ticket": 99}), alice.tool_names()]
        with McpSession(base, role="viewer") as viewer:
            said += [viewer.call("tickets_open", {"title": "no"}), viewer.call("tickets_queue"),
                     viewer.tool_names()]
        admin = base + "/agentenv/ext/example/tickets-admin/"
        for response in (httpx.get(admin + "count"), httpx.post(admin + "close", json={"ticket": 2}),
                         httpx.post(admin + "close", json={"ticket": 99}), httpx.post(admin + "close", json={})):
            said.append((response.status_code, response.json()))
        said.append(rpc(base, "data/get", {}))
        return said

    reference, ported = both(tickets, story)
    for step, (theirs, ours) in enumerate(zip(reference, ported)):
        assert ours == theirs, f"step {step}: {json.dumps(ours)[:400]} != {json.dumps(theirs)[:400]}"
