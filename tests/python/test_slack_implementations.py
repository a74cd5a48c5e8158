"""Where the slack implementations (SLACK_IMPLEMENTATIONS) differ from each other, asserted as
differences, with why. Everything else they answer alike: test_clients.py and
test_differential.py run once per implementation.

- Schemas: slack-py derives them as pydantic does (the reference SDK's tools/list, byte for byte);
  the Rust slack writes them with schemars (`["string", "null"]` for an optional string, no
  property titles, its own key order). The host's card is tools/list's schema less its title, so
  the cards differ the same way. Compared normalised (property names, required), all agree.
- Validation texts of an extension request with a value of the wrong type: each SDK words its own
  (`invalid_params` from both).
"""
from __future__ import annotations

import json

import httpx
import pytest

from conftest import CARD_PATH, SLACK_IMPLEMENTATIONS, STATS_PATH, McpSession, reset_state, rpc

SEND = "slack_send_message"


@pytest.fixture(scope="module")
def servers(pool) -> dict:
    """One fresh server per implementation, side by side."""
    return {name: pool.slack(name, label="envhost-side-by-side") for name in SLACK_IMPLEMENTATIONS}


def listed(server) -> dict:
    with McpSession(server) as session:
        return {t["name"]: t for t in session.result("tools/list", {})["tools"]}


def test_each_server_runs_its_own_component(servers):
    """The suites' servers really serve the component of their implementation."""
    for name, server in servers.items():
        component = SLACK_IMPLEMENTATIONS[name].component
        assert f"loading environment=slack component={component}" in server.log_tail(20000)


def test_every_implementation_lists_the_reference_schemas_byte_for_byte(servers, reference_server):
    """Every slack's tools/list is the reference's exactly (schemas, key order, titles): the
    Python SDK derives pydantic's schemas, the Rust and JavaScript SDKs write theirs in
    pydantic's form."""
    reference = json.dumps(listed(reference_server))
    for name, server in servers.items():
        assert json.dumps(listed(server)) == reference, name
    assert listed(servers["slack"])[SEND]["inputSchema"]["properties"]["to"]["anyOf"] == [
        {"type": "string"}, {"type": "null"}]


def test_the_cards_are_the_same_bytes(servers):
    """The cards are the same bytes, tools' schemas included: the card gives the reference's
    simplified schema, which the SDKs' different `tools/list` schemas (above) come to alike."""
    cards = {name: httpx.get(server.url(CARD_PATH)).content for name, server in servers.items()}
    assert cards["slack-py"] == cards["slack"]


def test_a_wrong_type_in_an_extension_request_is_worded_by_each_sdk(servers):
    """Both answer 400 invalid_params; the message is each SDK's own (serde's, or the Python SDK's
    `<name> must be <type>`)."""
    answers = {}
    for name, server in servers.items():
        reset_state(server)
        rpc(server, "data/add", {"parts": [{"kind": "data", "data": {"channels": [{"name": "general"}]}}]})
        answers[name] = httpx.post(server.url(f"{STATS_PATH}/set-topic"), json={"channel": "general", "topic": 5})
    for answer in answers.values():
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_params"
    assert answers["slack-py"].json()["error"]["message"] == "topic must be a string"
    assert answers["slack"].json()["error"]["message"] != answers["slack-py"].json()["error"]["message"]
