"""Environments written for the reference SDK (tests/reference-ports/NAME/reference.py), ported to
envhost's Python SDK by changing their imports only (python/NAME.py), served side by side with the
reference serving the original: the cards are the same bytes, and tools/list, tool calls (hooks,
hidden tools, verbatim image results, coded errors), extensions with their params, tool access and
the data plane answer the same."""
from __future__ import annotations

import base64
import json
import re
import sys

import httpx
import pytest

from conftest import CARD_PATH, GUEST_RELEASE, REPO, McpSession, free_port, rpc
from object_store import BUCKET, authority, grant, s3, stored  # noqa: F401 -- fixtures

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


#: The ports of tickets: Python (imports changed only), Rust and JavaScript (by hand).
TICKETS_PORTS = ["tickets-py", "tickets", "tickets-js"]


def serve_beside(pool, environment: str, port_name: str, *flags: str, env: dict[str, str] | None = None):
    """(the reference serving tests/reference-ports/<environment>/reference.py, envhost serving
    the port `port_name` with `flags`), the reference's process given `env` too."""
    port = free_port()
    reference = pool._launch(
        f"reference-{environment}", [sys.executable, str(PORTS / environment / "reference.py")],
        {"ENVIRONMENT_NAME": "", "MCP_HOST": "127.0.0.1", "MCP_PORT": str(port), **(env or {})}, port, CARD_PATH)
    return reference, pool.envhost(GUEST_RELEASE / f"{port_name}.wasm", *flags, label=port_name)


@pytest.fixture(scope="module", params=TICKETS_PORTS)
def tickets(request, pool):
    """(the reference serving the original tickets, envhost serving one port): a reference of its
    own for each port, since the story changes the reference's state (tool access included)."""
    return serve_beside(pool, "tickets", request.param)


def both(pair, ask):
    return [ask(server.base_url) for server in pair]


def test_the_slack_port_changes_imports_only():
    """slack's Python port is the example guest guests/slack-py; its Rust and JavaScript ports
    (guests/slack, guests/slack-js) and it are compared with the reference by the differential
    suite and test_slack_implementations.py."""
    original = PORTS / "slack" / "reference.py"
    assert code_lines(original) == code_lines(REPO / "guests" / "slack-py" / "slack_env.py")


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
                     alice.call("tickets_open", {"title": "numeral", "priority": " 4 "}),
                     alice.call("tickets_open", {"title": "float", "priority": 5.0}),
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


# ------------------------------------------------------------------------------------- notes

#: The ports of notes: Python (imports changed only), Rust and JavaScript (by hand).
NOTES_PORTS = ["notes-py", "notes", "notes-js"]


@pytest.fixture(scope="module", params=NOTES_PORTS)
def notes(request, pool, authority):
    """(the reference serving the original notes, envhost serving one port, the port's name), both
    trusting the object store's certificate authority; a reference of its own for each port."""
    reference, ported = serve_beside(pool, "notes", request.param, "--ca-file", str(authority.ca_file),
                                     env={"SSL_CERT_FILE": str(authority.ca_file)})
    return reference, ported, request.param


def test_the_notes_port_changes_imports_only():
    assert code_lines(PORTS / "notes" / "reference.py") == code_lines(PORTS / "notes" / "python" / "notes.py")


def test_the_notes_cards_and_tools_are_the_same_bytes(notes):
    def described(base):
        with McpSession(base) as session:
            return httpx.get(base + CARD_PATH, timeout=10).content, session.result("tools/list")

    reference, ported = both(notes[:2], described)
    assert ported == reference


def leading_words(result: dict) -> dict:
    """A tool's error result with its diagnostic text cut after `Error executing tool <name>: `
    (docs/protocol.md#differences-from-the-reference: the diagnostic texts differ)."""
    text = result["content"][0]["text"]
    return {**result, "content": [{"type": "text", "text": text[:text.index(": ") + 2]}]}


def test_notes_exports_through_a_grant_files_tool_updates_and_mount_hooks_answer_the_same(notes, s3):
    note_file = base64.b64encode(b"milk, eggs").decode()

    def story(base, root):
        said = [rpc(base, "data/reset", {}),
                rpc(base, "data/add", {"parts": [
                    {"kind": "text", "text": "call mum"},
                    {"kind": "data", "data": {"notes": [{"title": "plan", "body": "ship it", "tags": ["work"]}]}},
                    {"kind": "file", "file": {"bytes": note_file, "name": "shopping.txt", "mimeType": "text/plain"}}]}),
                rpc(base, "data/add", {"parts": [{"kind": "data", "data": {"notes": [{"body": "no title"}]}}]})]
        with McpSession(base) as session:
            said += [session.call("notes_write", {"title": "Idea", "body": "a ship in a bottle"}),
                     session.call("notes_write", {"title": "Tagged", "body": "x", "tags": ["work", "later"]}),
                     session.call("notes_find", {"query": "SHIP"}),
                     session.call("notes_find", {"query": "", "limit": 2}),
                     session.call("notes_find", {"query": "", "tag": "work"}),
                     leading_words(session.call("notes_find", {"query": "", "limit": "two"})),
                     session.call("notes_find", {"query": "", "limit": "1"}),
                     session.call("notes_find", {"query": "", "limit": 1.0, "tag": "null"}),
                     session.call("notes_write", {"title": "Json", "body": "b", "tags": "[\"x\", \"y\"]"}),
                     session.call("notes_read_aloud", {"id": "2"}),
                     session.call("notes_read_aloud", {"id": 1}),
                     session.call("notes_read_aloud", {"id": 99}),
                     session.call("notes_focus", {"topic": "boats"}),
                     session.result("tools/list")]
        said.append(httpx.get(base + CARD_PATH, timeout=10).json())
        archive = base + "/agentenv/ext/example/notes-archive/"
        for response in (httpx.get(archive + "count"), httpx.post(archive + "tag", json={"id": 2, "tag": "x"}),
                         httpx.post(archive + "tag", json={"id": 99, "tag": "x"}), httpx.post(archive + "purge", json={}),
                         httpx.post(base + "/agentenv/ext/example/notes-labs/shuffle", json={})):
            said.append((response.status_code, response.text if response.status_code == 404 else response.json()))
        said.append(rpc(base, "data/get", {}))
        said.append(rpc(base, "data/get", {"write_namespace": grant(s3, root)}))
        keys = sorted(o["Key"].removeprefix(root + "/") for o in
                      s3.list_objects_v2(Bucket=BUCKET, Prefix=root + "/").get("Contents", []))
        said.append({key: stored(s3, f"{root}/{key}") for key in keys})
        said.append(rpc(base, "data/get", {"write_namespace": grant(s3, root + "-small", max_objects=2)}))
        return said

    reference = story(notes[0].base_url, f"runs/{notes[2]}/reference")
    ported = story(notes[1].base_url, f"runs/{notes[2]}/ported")
    assert len(ported) == len(reference)
    for step, (theirs, ours) in enumerate(zip(reference, ported)):
        assert ours == theirs, f"step {step}: {str(ours)[:600]} != {str(theirs)[:600]}"
