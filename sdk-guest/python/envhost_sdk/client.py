"""Requests to the client of the tool call being served (MCP `sampling/createMessage`,
`elicitation/create`, `roots/list`): the call waits for the answer, which the host journals so
that a replay gets the same one without asking again."""
from __future__ import annotations

import json
from typing import Any


class ClientError(Exception):
    """A request got no result: the client's JSON-RPC error, or the host's (`-32601`: no MCP
    client is calling, or it did not declare the capability; `-32001`: no answer in time)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message


def request(method: str, params: dict[str, Any]) -> Any:
    """Sends `method` with `params` to the calling client; answers its result. Raises
    ClientError, also outside a component (no host to send through)."""
    try:
        from wit_world.imports import client as host
        from componentize_py_types import Err
    except ImportError:
        raise ClientError(-32601, "no MCP client is calling: not running in envhost") from None
    try:
        answer = host.request(method, json.dumps(params))
    except Err as e:
        raise ClientError(e.value.code, e.value.message) from None
    return json.loads(answer)


def sample(prompt: str, max_tokens: int) -> Any:
    """Asks the client's model to answer `prompt` (one user message, at most `max_tokens`): the
    `sampling/createMessage` result, `{"role", "content", "model", "stopReason"?}`."""
    message = {"role": "user", "content": {"type": "text", "text": prompt}}
    return request("sampling/createMessage", {"messages": [message], "maxTokens": max_tokens})


def elicit(message: str, schema: dict[str, Any]) -> Any:
    """Asks the client's user for values shaped by `schema` (a flat JSON Schema object): the
    `elicitation/create` result, `{"action": "accept" | "decline" | "cancel", "content"?}`."""
    return request("elicitation/create", {"message": message, "requestedSchema": schema})
