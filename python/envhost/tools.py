"""Tool definitions for model APIs, from ``Episode.list_tools()`` (MCP's ``tools/list`` entries).

>>> client.chat.completions.create(model=..., messages=..., tools=envhost.tools.openai(episode.list_tools()))
>>> anthropic.messages.create(model=..., messages=..., tools=envhost.tools.anthropic(episode.list_tools()))
"""
from __future__ import annotations

from typing import Any


def openai(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI Chat Completions' ``tools``: ``{"type": "function", "function": {"name",
    "description", "parameters"}}`` each, the input schema as the parameters."""
    return [{"type": "function", "function": {"name": tool["name"], "description": tool.get("description") or "",
                                              "parameters": tool["inputSchema"]}} for tool in tools]


def anthropic(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic Messages' ``tools``: ``{"name", "description", "input_schema"}`` each."""
    return [{"name": tool["name"], "description": tool.get("description") or "", "input_schema": tool["inputSchema"]}
            for tool in tools]
