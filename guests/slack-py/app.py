"""The slack example environment on the Python SDK (envhost_sdk), served exactly like the Rust
`guests/slack`: channels and messages, four tools (one hidden until granted), a stats extension,
and an additive, all-or-nothing data plane. A port of `tests/python/reference/slack_env.py`: the
imports changed, and file parts arrive as bytes (the host fetched them).

Build: `make guests-py` (writes guests/target/wasm32-wasip2/release/slack-py.wasm).
"""
from __future__ import annotations

import json
from typing import Annotated, Any, Optional, TypedDict

from envhost_sdk import (
    AgentEnvEnvironment,
    AgentEnvError,
    DataPart,
    Field,
    FilePart,
    FileWithBytes,
    Part,
    TextPart,
    ToolContext,
    add_data,
    environment_card,
    export,
    extension,
    get_data,
    reset_data,
    tool,
)

STATS_EXTENSION_URI = "urn:example:slack-stats/v1"
STATS_DESCRIPTION = "Channel and message counts, and channel topics."


class Channel(TypedDict):
    name: str
    topic: str


# "from" is a Python keyword, so the message shape is declared functionally.
MessageOut = TypedDict("MessageOut", {"channel": str, "text": str, "from": Optional[str], "to": Optional[str]})


def invalid(message: str) -> AgentEnvError:
    """A malformed `data/add` payload (the host answers -32000 `add_failed` with the message)."""
    return AgentEnvError("invalid_data", message)


def channel_not_found(name: str, *, status: int = 400, hint: str | None = None) -> AgentEnvError:
    return AgentEnvError("channel_not_found", f"no channel named '{name}'", status=status, hint=hint)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _str_or_none(value: Any, what: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise invalid(f"{what} must be a string or null")


def _file_payload(part: FilePart) -> Any:
    if not isinstance(part.file, FileWithBytes):
        raise invalid(f"the file part {part.file.uri} was not fetched")
    try:
        # Strict JSON, as the Rust slack reads it: UTF-8 only, no BOM, no NaN or Infinity.
        return json.loads(part.file.content.decode("utf-8"), parse_constant=_reject_constant)
    except ValueError as e:
        raise invalid(f"the file part is not JSON: {e}") from None


def _stage(payload: Any, channels: dict[str, Channel], messages: list[dict[str, Any]]) -> None:
    if not isinstance(payload, dict):
        raise invalid("the data must be a JSON object with 'channels' and/or 'messages'")
    raw_channels = payload.get("channels", [])
    raw_messages = payload.get("messages", [])
    if not isinstance(raw_channels, list) or not isinstance(raw_messages, list):
        raise invalid("'channels' and 'messages' must be lists")
    for i, ch in enumerate(raw_channels):
        if not isinstance(ch, dict) or not isinstance(ch.get("name"), str) or not ch["name"]:
            raise invalid(f"channels[{i}] must be an object with a non-empty string 'name'")
        topic = ch.get("topic")
        if topic is None:
            topic = ""
        if not isinstance(topic, str):
            raise invalid(f"channels[{i}].topic must be a string")
        channels[ch["name"]] = {"name": ch["name"], "topic": topic}
    for i, msg in enumerate(raw_messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("channel"), str) or not isinstance(msg.get("text"), str):
            raise invalid(f"messages[{i}] must be an object with string 'channel' and 'text'")
        if msg["channel"] not in channels:
            raise invalid(f"messages[{i}] names unknown channel '{msg['channel']}'")
        messages.append({
            "channel": msg["channel"],
            "text": msg["text"],
            "from": _str_or_none(msg.get("from"), f"messages[{i}].from"),
            "to": _str_or_none(msg.get("to"), f"messages[{i}].to"),
        })


@environment_card(name="slack")
class SlackEnv(AgentEnvEnvironment):
    tool_access = True

    def __init__(self) -> None:
        self.channels: dict[str, Channel] = {}
        self.messages: list[dict[str, Any]] = []

    # ---------------------------------------------------------------- data plane

    @reset_data
    def reset(self) -> None:
        self.channels = {}
        self.messages = []

    @add_data
    def add(self, parts: list[Part]) -> None:
        """Loads every part or none: channels upsert by name, messages append and must name a
        channel that exists before or within this add."""
        channels = {name: Channel(name=c["name"], topic=c["topic"]) for name, c in self.channels.items()}
        messages: list[dict[str, Any]] = []
        for part in parts:
            if isinstance(part, TextPart):
                continue
            payload = part.data if isinstance(part, DataPart) else _file_payload(part)
            _stage(payload, channels, messages)
        self.channels = channels
        self.messages.extend(messages)

    @get_data
    def get(self) -> list[Part]:
        return [DataPart(data={
            "channels": [dict(c) for c in self.channels.values()],
            "messages": [dict(m) for m in self.messages],
        })]

    # ---------------------------------------------------------------- tools

    def _require_channel(self, channel: str) -> None:
        if channel not in self.channels:
            raise channel_not_found(channel, hint="list the channels with the list_channels tool")

    @tool(name="{environment_name}_send_message")
    def send_message(
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
    def list_inbox(self, ctx: ToolContext) -> list[MessageOut]:
        """List the messages addressed to the calling role, oldest first."""
        role = ctx.caller.role
        if role is None:
            return []
        return [MessageOut(m) for m in self.messages if m["to"] == role]

    @tool(name="{environment_name}_list_channels", annotations={"readOnlyHint": True}, structured_output=True)
    def list_channels(self) -> list[Channel]:
        """List every channel with its topic."""
        return [Channel(name=c["name"], topic=c["topic"]) for c in self.channels.values()]

    @tool(name="{environment_name}_admin_purge", hidden_by_default=True)
    def admin_purge(
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
    def stats_get(self) -> dict[str, int]:
        return {"channels": len(self.channels), "messages": len(self.messages)}

    @extension(STATS_EXTENSION_URI, op="set-topic", method="POST", description=STATS_DESCRIPTION)
    def stats_set_topic(self, channel: str, topic: str) -> Channel:
        if channel not in self.channels:
            raise channel_not_found(channel, status=404)
        self.channels[channel]["topic"] = topic
        return Channel(name=channel, topic=topic)


Env = export(SlackEnv)
