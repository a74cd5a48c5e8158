"""`--url-prefix` (docs/serve.md#behind-a-proxy): every route also answers under the prefix, and
every URL the server hands out begins with it, so that a client following those URLs, the
official MCP client among them, reaches the episode through a proxy that routes by prefix."""
from __future__ import annotations

import subprocess

import httpx
import pytest
from agentenv_protocol.client import get_card
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from conftest import CARD_PATH, run

PREFIX = "/pods/envhost-0"
GENERAL = [{"kind": "data", "data": {"channels": [{"name": "general"}]}}]
SEND = "slack_send_message"


@pytest.fixture(scope="module")
def prefixed(pool, guests):
    return pool.envhost(guests["slack"], env={"ENVHOST_URL_PREFIX": PREFIX}, label="prefixed")


def test_handed_out_urls_begin_with_the_prefix(prefixed):
    created = httpx.post(prefixed.url(f"{PREFIX}/episodes"), json={"parts": GENERAL})
    assert created.status_code == 201, created.text
    episode = created.json()
    for key in ("url", "agent_url", "mcp_url"):
        assert episode[key].startswith(f"{PREFIX}/"), episode
    assert created.headers["location"] == episode["url"]
    listed = httpx.get(prefixed.url("/episodes")).json()["episodes"]
    assert all(e["url"].startswith(f"{PREFIX}/episodes/") for e in listed)
    snapshot = httpx.post(prefixed.url(episode["url"] + "snapshot")).json()
    assert snapshot["url"] == f"{PREFIX}/snapshots/{snapshot['snapshot']}"
    assert httpx.get(prefixed.url(snapshot["url"])).status_code == 200
    fork = httpx.post(prefixed.url(episode["url"] + "fork"))
    assert fork.status_code == 201 and fork.headers["location"].startswith(f"{PREFIX}/episodes/")


def test_routes_answer_with_and_without_the_prefix(prefixed):
    for path in ("/ready", CARD_PATH, "/episodes"):
        assert httpx.get(prefixed.url(path)).status_code == 200
        assert httpx.get(prefixed.url(PREFIX + path)).status_code == 200
    root = httpx.get(prefixed.url(PREFIX)).status_code
    assert root == httpx.get(prefixed.url("/")).status_code
    assert httpx.get(prefixed.url("/pods/envhost-01/ready")).status_code != 200
    assert run(get_card(prefixed.url(PREFIX)))["name"] == "slack"


def test_the_mcp_client_follows_the_prefixed_agent_url(prefixed):
    episode = httpx.post(prefixed.url("/episodes"), json={"parts": GENERAL}).json()

    async def session() -> list:
        async with streamablehttp_client(prefixed.url(episode["mcp_url"])) as (read, write, _):
            async with ClientSession(read, write) as mcp:
                await mcp.initialize()
                result = await mcp.call_tool(SEND, {"channel": "general", "text": "through"})
                assert not result.isError
                return [tool.name for tool in (await mcp.list_tools()).tools]

    assert SEND in run(session())
    data = httpx.post(prefixed.url(episode["url"] + "agentenv"),
                      json={"jsonrpc": "2.0", "id": 1, "method": "data/get"}).json()
    assert data["result"]["parts"][0]["data"]["messages"][0]["text"] == "through"


@pytest.mark.parametrize("bad", ["pods", "/pods/", "/a//b", "/a/../b", "/a b"])
def test_a_malformed_prefix_is_refused_at_start(envhost_bin, guests, bad):
    done = subprocess.run([str(envhost_bin), "serve", str(guests["slack"]), "--port", "0",
                           "--url-prefix", bad], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "URL prefix" in done.stderr and "/pods/envhost-0" in done.stderr
