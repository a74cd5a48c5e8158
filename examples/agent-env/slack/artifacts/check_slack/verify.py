"""Checks the agent's post: #general holds the prompt's text, read from the episode's state
(agentenv_envhost.state), and the env's MCP tools still answer."""
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from agentenv_envhost.state import data_get

PROMPT = "Tell the team the build is green"


async def verify(mcp_url):
    async with streamable_http_client(mcp_url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            channels = await session.call_tool("slack_list_channels", {})
    parts = await data_get(mcp_url)
    messages = [m for p in parts if p.get("kind") == "data" for m in p["data"].get("messages", [])]
    posted = any(m.get("channel") == "general" and m.get("text") == PROMPT for m in messages)
    return [
        {"id": "posted", "result": posted, "description": "the agent posted the prompt's text to #general"},
        {"id": "tools", "result": not channels.isError, "description": "the env's MCP tools answer"},
    ]
