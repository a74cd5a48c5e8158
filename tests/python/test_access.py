"""A server guarded by an operator token (docs/serve.md#access), as the clients operators and
agents use see it: the official MCP client and the agentenv clients with the token (a bearer
header, or the password of the URL's user-info where a client takes only a URL), and with an
episode's agent URL and nothing else; and what the server says at start."""
from __future__ import annotations

import asyncio
import subprocess

import httpx
import pytest
from agentenv_protocol import DataPart, ToolSession, ToolSessionError
from agentenv_protocol.client import add_data, get_card, get_data, invoke_extension
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from conftest import CARD_PATH, STATS_URI, free_port

TOKEN = "python-suite-token-0123456789abcdef"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
SEND = "slack_send_message"


@pytest.fixture(scope="module")
def guarded(pool, guests):
    """envhost serving slack with an operator token, from ENVHOST_CONTROL_TOKEN."""
    return pool.envhost(guests["slack"], env={"ENVHOST_CONTROL_TOKEN": TOKEN}, label="guarded")


def with_token(server) -> str:
    """The server's base URL with the token as the password of its user-info."""
    return server.base_url.replace("http://", f"http://envhost:{TOKEN}@")


def new_episode(server) -> dict:
    created = httpx.post(server.url("/episodes"), json={"parts": [
        {"kind": "data", "data": {"channels": [{"name": "general"}]}}]}, headers=BEARER)
    assert created.status_code == 201, created.text
    return created.json()


async def mcp_call(url: str, headers: dict[str, str] | None = None) -> tuple[list[str], dict]:
    """The official MCP client at `url`: the tools it lists and a message sent to #general."""
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            sent = await session.call_tool(SEND, {"channel": "general", "text": "hi"})
            return tools, sent.structuredContent


def http_status(error: BaseException | None) -> int | None:
    """The status of the `httpx.HTTPStatusError` that `error` is, holds (an exception group) or
    was caused by."""
    if error is None:
        return None
    if isinstance(error, httpx.HTTPStatusError):
        return error.response.status_code
    for inner in getattr(error, "exceptions", ()):
        if (status := http_status(inner)) is not None:
            return status
    return http_status(error.__cause__ or error.__context__)


def test_every_control_route_needs_the_token(guarded):
    for method, path in [("GET", "/episodes"), ("POST", "/episodes"), ("GET", "/metrics"), ("GET", CARD_PATH),
                         ("POST", "/agentenv"), ("POST", "/tools/enable"), ("POST", "/snapshot"),
                         ("GET", "/snapshots"), ("POST", "/agents/x/invoke")]:
        refused = httpx.request(method, guarded.url(path), json={})
        assert refused.status_code == 401, (method, path, refused.text)
        assert refused.json()["error"]["code"] == "unauthorized"
        assert "Bearer" in refused.headers["www-authenticate"]
    assert httpx.get(guarded.url("/ready")).status_code == 200


def test_the_official_mcp_client_works_with_the_token(guarded):
    seeded = new_episode(guarded)
    tools, sent = asyncio.run(mcp_call(guarded.url(seeded["url"] + "mcp"), BEARER))
    assert SEND in tools and sent == {"result": "ok"}
    with pytest.raises(Exception):
        asyncio.run(mcp_call(guarded.url(seeded["url"] + "mcp")))


def test_the_official_mcp_client_works_with_an_agent_url_alone(guarded):
    mine, other = new_episode(guarded), new_episode(guarded)
    tools, sent = asyncio.run(mcp_call(guarded.url(mine["mcp_url"])))
    assert SEND in tools and sent == {"result": "ok"}
    forged = mine["mcp_url"].replace(mine["mcp_url"].split("/")[3], other["mcp_url"].split("/")[3])
    with pytest.raises(BaseException) as refused:
        asyncio.run(mcp_call(guarded.url(forged)))
    assert http_status(refused.value) == 403, repr(refused.value)
    answer = httpx.get(guarded.url(forged.removesuffix("mcp") + CARD_PATH.lstrip("/")))
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "agent_url_refused", answer.text
    state = httpx.post(guarded.url(mine["url"] + "agentenv"), headers=BEARER,
                       json={"jsonrpc": "2.0", "id": 1, "method": "data/get"}).json()
    assert state["result"]["parts"][0]["data"]["messages"][0]["text"] == "hi"


def test_the_agentenv_clients_work_with_the_token_in_the_url(guarded):
    episode = new_episode(guarded)
    base = with_token(guarded) + episode["url"].rstrip("/")

    async def run():
        card = await get_card(base)
        await add_data(base, [DataPart(data={"channels": [{"name": "random"}]})])
        stats = await invoke_extension(base, card, STATS_URI, method="get")
        data = await get_data(base)
        return card, stats, data

    card, stats, data = asyncio.run(run())
    assert card["name"] == "slack"
    assert stats["channels"] == 2
    assert [c["name"] for c in data.parts[0].data["channels"]] == ["general", "random"]
    with pytest.raises(httpx.HTTPStatusError) as refused:
        asyncio.run(get_card(guarded.url(episode["url"].rstrip("/"))))
    assert refused.value.response.status_code == 401


def test_tool_session_works_with_the_token_header_and_with_an_agent_url(guarded):
    episode = new_episode(guarded)

    async def send(url: str, headers: dict[str, str] | None) -> str:
        async with ToolSession(mcp_url=url, role="alice", headers=headers) as session:
            return (await session.call_tool(SEND, {"channel": "general", "text": "hi"})).text

    assert asyncio.run(send(guarded.url(episode["url"] + "mcp"), BEARER)) == "ok"
    assert asyncio.run(send(guarded.url(episode["mcp_url"]), None)) == "ok"
    with pytest.raises(ToolSessionError):
        asyncio.run(send(guarded.url(episode["url"] + "mcp"), None))


def test_an_agent_url_serves_the_card_to_the_agentenv_client_and_nothing_else(guarded):
    episode = new_episode(guarded)
    agent_base = guarded.url(episode["agent_url"].rstrip("/"))
    card = asyncio.run(get_card(agent_base))
    assert card["name"] == "slack"
    with pytest.raises(httpx.HTTPStatusError) as refused:
        asyncio.run(get_data(agent_base))
    assert refused.value.response.status_code == 401


def serve_and_wait(envhost_bin, component, *flags, env=None) -> subprocess.CompletedProcess:
    """`envhost serve` that must exit by itself within 60 s: its exit code and output."""
    return subprocess.run([str(envhost_bin), "serve", str(component), *flags], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", **(env or {})})


def test_without_a_token_only_loopback_is_served(envhost_bin, guests):
    refused = serve_and_wait(envhost_bin, guests["slack"], "--host", "0.0.0.0", "--port", str(free_port()))
    assert refused.returncode == 1
    assert "refusing to serve on 0.0.0.0 without an operator token" in refused.stderr
    assert "--control-token-file" in refused.stderr and "--insecure-no-auth" in refused.stderr
    weak = serve_and_wait(envhost_bin, guests["slack"], "--port", str(free_port()),
                          env={"ENVHOST_CONTROL_TOKEN": "short"})
    assert weak.returncode == 1 and "at least 16" in weak.stderr


def test_the_start_says_who_may_call(pool, guests):
    open_server = pool.envhost(guests["slack"], label="open")
    log = open_server.log_tail()
    assert "no operator token: serving on loopback only" in log
    assert "ENVHOST_CONTROL_TOKEN" in log
    guarded = pool.envhost(guests["slack"], env={"ENVHOST_CONTROL_TOKEN": TOKEN}, label="guarded-start")
    assert "the operator token guards every route but /ready" in guarded.log_tail()
