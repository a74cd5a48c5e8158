"""The "slack" example environment, written with the Python reference SDK (agentenv-framework-protocol).

envhost's example guest `guests/slack` must serve this same environment: same card, tools, schemas'
property names, data-plane semantics, errors and extension. Run both side by side to compare behaviour
and speed (install the reference with `pip install agentenv-framework-protocol`).

Run:  MCP_PORT=18765 python reference.py          (MCP_HOST defaults to 0.0.0.0; set 127.0.0.1 for tests)
      ENVIRONMENT_NAME=chat MCP_PORT=18766 python reference.py   (renames the card and every tool prefix)

State
  channels  {name -> {"name": str, "topic": str}}          (insertion ordered; topic defaults to "")
  messages  [{"channel": str, "text": str, "from": str|None, "to": str|None}]   (append ordered)

Data plane (JSON-RPC at POST /agentenv)
  data/reset  clears channels and messages (NOT the tool-access rules: those belong to the SDK, not the env).
  data/add    additive and all-or-nothing over the whole request. Parts:
                DataPart {"channels": [...], "messages": [...]}  (either key optional)
                FilePart with inline base64 "bytes" of the same JSON, or a "uri": file://<abs path>,
                  http://... or https://...; any other scheme fails the add.
                TextPart: ignored.
              A channel upserts by name (a later topic replaces an earlier one); a message is appended and
              must name a channel that exists (before or within this add); "from"/"to" default to null.
              A malformed payload fails the whole add (-32000, data.code "add_failed"), nothing applied.
  data/get    one DataPart {"channels": [...], "messages": [...]} in insertion order, every message with all
              four keys.

Tools (MCP, streamable HTTP at /mcp; names follow the card name, "{environment_name}_...")
  <env>_send_message(channel, text, to=None) -> "ok"; from = caller role (AgentEnv-Role header), null when none.
      Unknown channel -> AgentEnvError("channel_not_found", ..., applied "no") -> isError result.
  <env>_list_inbox() -> the messages whose "to" equals the caller's role (none for a caller without a role).
  <env>_list_channels() -> [{"name", "topic"}], readOnlyHint, structured output.
  <env>_admin_purge(channel) -> number of messages deleted; hidden_by_default (granted per role via /tools/enable).

Extension urn:example:slack-stats/v1
  op "get"        GET  /agentenv/ext/example/slack-stats/get        -> {"channels": n, "messages": m}
  op "set-topic"  POST /agentenv/ext/example/slack-stats/set-topic  {"channel", "topic"} -> {"name", "topic"};
                  unknown channel -> 404 {"ok": false, "error": {"code": "channel_not_found", ...}}
"""
from __future__ import annotations

import base64
import binascii
import copy
import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Annotated, Any, Optional

from typing_extensions import TypedDict

import httpx
from pydantic import Field

from agentenv_protocol import (
    AgentEnvEnvironment,
    AgentEnvError,
    DataPart,
    FilePart,
    TextPart,
    ToolContext,
    add_data,
    environment_card,
    extension,
    get_data,
    reset_data,
    tool,
)
from agentenv_protocol.types import FileWithBytes, FileWithUri

STATS_EXTENSION_URI = "urn:example:slack-stats/v1"
STATS_DESCRIPTION = "Channel and message counts, and channel topics."
#: The most a URL part may fetch.
MAX_URL_BYTES = 64 << 20


class Channel(TypedDict):
    name: str
    topic: str


# "from" is a Python keyword, so the message shape is declared functionally.
MessageOut = TypedDict("MessageOut", {"channel": str, "text": str, "from": Optional[str], "to": Optional[str]})


def _str_or_none(value: Any, what: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"{what} must be a string or null")


async def _fetch_uri(uri: str) -> bytes:
    scheme = urllib.parse.urlsplit(uri).scheme.lower()
    if scheme == "file":
        path = urllib.request.url2pathname(urllib.parse.urlsplit(uri).path)
        return Path(path).read_bytes()
    if scheme in ("http", "https"):
        data = bytearray()
        async with httpx.AsyncClient(follow_redirects=True, timeout=60) as client:
            async with client.stream("GET", uri) as response:
                response.raise_for_status()
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > MAX_URL_BYTES:
                        raise ValueError(f"the file at {uri} is over {MAX_URL_BYTES} bytes")
        return bytes(data)
    raise ValueError(f"unsupported file uri scheme {scheme!r}: use file://, http:// or https://")


@environment_card(name="slack")
class SlackEnv(AgentEnvEnvironment):
    tool_access = True

    def __init__(self) -> None:
        self.channels: dict[str, dict] = {}
        self.messages: list[dict] = []

    # ---------------------------------------------------------------- data plane

    @reset_data
    def reset(self) -> None:
        self.channels = {}
        self.messages = []

    @add_data
    async def add(self, parts: list) -> None:
        channels = copy.deepcopy(self.channels)
        messages: list[dict] = []
        for part in parts:
            if isinstance(part, TextPart):
                continue
            if isinstance(part, DataPart):
                payload = part.data
            elif isinstance(part, FilePart):
                payload = await self._file_payload(part)
            else:  # pragma: no cover - the SDK's Part union has only the three kinds
                raise ValueError(f"unsupported part kind {getattr(part, 'kind', None)!r}")
            self._stage(payload, channels, messages)
        # all parts read and checked: commit
        self.channels = channels
        self.messages.extend(messages)

    @staticmethod
    async def _file_payload(part: FilePart) -> dict:
        if isinstance(part.file, FileWithBytes):
            try:
                raw = base64.b64decode(part.file.bytes, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("the file part's bytes are not base64") from None
        elif isinstance(part.file, FileWithUri):
            raw = await _fetch_uri(part.file.uri)
        else:  # pragma: no cover
            raise ValueError("unsupported file part")
        try:
            payload = json.loads(raw)
        except ValueError as e:
            raise ValueError(f"the file part is not JSON: {e}") from None
        return payload

    @staticmethod
    def _stage(payload: Any, channels: dict, messages: list) -> None:
        if not isinstance(payload, dict):
            raise ValueError("the data must be a JSON object with 'channels' and/or 'messages'")
        raw_channels = payload.get("channels", [])
        raw_messages = payload.get("messages", [])
        if not isinstance(raw_channels, list) or not isinstance(raw_messages, list):
            raise ValueError("'channels' and 'messages' must be lists")
        for i, ch in enumerate(raw_channels):
            if not isinstance(ch, dict) or not isinstance(ch.get("name"), str) or not ch["name"]:
                raise ValueError(f"channels[{i}] must be an object with a non-empty string 'name'")
            topic = ch.get("topic", "")
            if topic is None:
                topic = ""
            if not isinstance(topic, str):
                raise ValueError(f"channels[{i}].topic must be a string")
            channels[ch["name"]] = {"name": ch["name"], "topic": topic}
        for i, msg in enumerate(raw_messages):
            if not isinstance(msg, dict) or not isinstance(msg.get("channel"), str) or not isinstance(msg.get("text"), str):
                raise ValueError(f"messages[{i}] must be an object with string 'channel' and 'text'")
            if msg["channel"] not in channels:
                raise ValueError(f"messages[{i}] names unknown channel {msg['channel']!r}")
            messages.append({
                "channel": msg["channel"],
                "text": msg["text"],
                "from": _str_or_none(msg.get("from"), f"messages[{i}].from"),
                "to": _str_or_none(msg.get("to"), f"messages[{i}].to"),
            })

    @get_data
    def get(self) -> list:
        return [DataPart(data={
            "channels": [dict(c) for c in self.channels.values()],
            "messages": [dict(m) for m in self.messages],
        })]

    # ---------------------------------------------------------------- tools

    def _require_channel(self, channel: str) -> None:
        if channel not in self.channels:
            raise AgentEnvError("channel_not_found", f"no channel named {channel!r}", applied="no",
                                hint="list the channels with the list_channels tool")

    @tool(name="{environment_name}_send_message")
    async def send_message(
        self,
        ctx: ToolContext,
        channel: Annotated[str, Field(description="The name of the channel to post in.")],
        text: Annotated[str, Field(description="The message text.")],
        to: Annotated[Optional[str], Field(description="The role the message is addressed to, if any.")] = None,
    ) -> str:
        """Post a message to a channel, from the calling role, optionally addressed to another role."""
        self._require_channel(channel)
        self.messages.append({"channel": channel, "text": text, "from": ctx.caller.role, "to": to})
        return "ok"

    @tool(name="{environment_name}_list_inbox")
    async def list_inbox(self, ctx: ToolContext) -> list[MessageOut]:
        """List the messages addressed to the calling role, oldest first."""
        role = ctx.caller.role
        if role is None:
            return []
        return [dict(m) for m in self.messages if m["to"] == role]

    @tool(name="{environment_name}_list_channels", annotations={"readOnlyHint": True}, structured_output=True)
    async def list_channels(self) -> list[Channel]:
        """List every channel with its topic."""
        return [dict(c) for c in self.channels.values()]

    @tool(name="{environment_name}_admin_purge", hidden_by_default=True)
    async def admin_purge(
        self,
        channel: Annotated[str, Field(description="The channel whose messages to delete.")],
    ) -> int:
        """Delete every message of a channel; answers how many were deleted. Hidden until granted to a role."""
        self._require_channel(channel)
        before = len(self.messages)
        self.messages = [m for m in self.messages if m["channel"] != channel]
        return before - len(self.messages)

    # ---------------------------------------------------------------- extension

    @extension(STATS_EXTENSION_URI, op="get", method="GET", description=STATS_DESCRIPTION)
    def stats_get(self) -> dict:
        return {"channels": len(self.channels), "messages": len(self.messages)}

    @extension(STATS_EXTENSION_URI, op="set-topic", method="POST", description=STATS_DESCRIPTION)
    def stats_set_topic(self, channel: str, topic: str) -> dict:
        if channel not in self.channels:
            raise AgentEnvError("channel_not_found", f"no channel named {channel!r}", status=404)
        self.channels[channel]["topic"] = topic
        return dict(self.channels[channel])


if __name__ == "__main__":
    SlackEnv().serve()
