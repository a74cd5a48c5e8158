"""What a verifier reads of an envhost environment beyond its tools: the episode's state, as
its `data/get` answers it, through the operator's route (agent-env's `env_outcome_verifier`
hands a verifier only the episode's MCP URL, which serves the agent the card and its tools)."""
from __future__ import annotations

import re
from typing import Any

from .server import Server

_AGENT_MCP = re.compile(r"/agent/([0-9a-f]{32})/[0-9a-f]{32}/mcp/?$")


def episode_id(mcp_url: str) -> str:
    """The id of the episode whose agent MCP URL is `mcp_url`; `ValueError` for another URL."""
    found = _AGENT_MCP.search(mcp_url.split("?", 1)[0])
    if found is None:
        raise ValueError(f"{mcp_url} is not an envhost episode's MCP URL")
    return found.group(1)


async def data_get(mcp_url: str) -> list[dict[str, Any]]:
    """The parts the episode of `mcp_url` answers to `data/get`; raises `RuntimeError` with the
    server's error when it answers one."""
    server = Server.configured()
    request = {"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {}}
    async with server.client() as client:
        answer = (await client.post(f"/episodes/{episode_id(mcp_url)}/agentenv", json=request)).json()
    if "error" in answer:
        raise RuntimeError(f"data/get failed: {answer['error']}")
    return answer["result"]["parts"]
