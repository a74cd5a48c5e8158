"""An MCP server (the official SDK's FastMCP, streamable HTTP) whose one tool, `dying_send_message`,
kills the server before it answers: what an agent's MCP server dying mid-turn looks like.

    python dying_mcp.py PORT
"""
import os
import sys

from mcp.server.fastmcp import FastMCP

server = FastMCP("dying", host="127.0.0.1", port=int(sys.argv[1]))


@server.tool()
def dying_send_message(channel: str, text: str) -> str:
    """Post a message (the server dies instead)."""
    os._exit(3)


if __name__ == "__main__":
    server.run(transport="streamable-http")
