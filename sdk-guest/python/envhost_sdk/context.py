"""`ToolContext`: who is calling, read from the host's `context` import (protocol.md#callers)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Caller:
    """Who is calling."""

    role: str | None = None
    """The caller's role: trimmed, and None for no role, `""` or `default`."""
    session: str | None = None
    """Tells callers with one role apart: the gateway's session key, or the MCP session id."""


@dataclass(frozen=True)
class ToolContext:
    """The call being served, the reference SDK's `ToolContext`.

    A `@tool` or `@extension` method gets it by declaring a parameter annotated `ToolContext` (any
    name); it never appears in the input schema. Other code reads it with `ToolContext.current()`.
    """

    caller: Caller = field(default_factory=Caller)
    """Who is calling."""
    tool: str | None = None
    """The tool's name as served (None outside a call); for an extension, `<uri>#<op>`."""
    arguments: Any = None
    """The arguments object as received, before validation (None outside a call)."""
    call_id: str | None = None
    """A fresh id of this call, 32 lowercase hex digits (None outside a call)."""

    @staticmethod
    def current() -> ToolContext:
        """The context of the call being served; an empty context outside any tool or extension
        call (and outside a component, where there is no host to ask)."""
        try:
            from wit_world.imports import context
        except ImportError:
            return ToolContext()
        call = context.current()
        if call is None:
            return ToolContext()
        return ToolContext(
            caller=Caller(role=call.caller.role, session=call.caller.session),
            tool=call.tool,
            arguments=json.loads(call.arguments),
            call_id=call.call_id,
        )
