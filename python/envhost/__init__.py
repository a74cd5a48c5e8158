"""envhost: agent environments as WebAssembly components, in-process.

A :class:`Host` loads environments (and agents bound to them) once and makes isolated
:class:`Episode` s of them in tens of microseconds; an episode answers the agentenv protocol's
operations (``reset``, ``add``, ``get``, ``list_tools``, ``call_tool``, ``call_extension``,
``snapshot``, ``fork``) with the same semantics and errors as over HTTP, with no HTTP. It loads
computer drivers the same way, whose :class:`Computer` s answer the ``computer/v1`` contract
(screenshots, clicks, keys) in-process. Every call
into a guest releases the GIL. :mod:`envhost.aio` is the same API for asyncio; :mod:`envhost.tools`
turns ``list_tools()`` into OpenAI's and Anthropic's tool definitions. Failures raise
:class:`EnvhostError`, whose ``code``, ``message``, ``retryable``, ``applied``, ``hint`` and
``status`` are http-api.md's coded fields.
"""
from ._envhost import Computer, ComputerSnapshot, EnvhostError, Episode, Host, Snapshot, ToolResult, Turn

__all__ = ["Computer", "ComputerSnapshot", "EnvhostError", "Episode", "Host", "Snapshot", "ToolResult", "Turn"]
