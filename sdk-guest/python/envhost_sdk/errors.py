"""`AgentEnvError`: a coded answer to the caller, the reference SDK's error type."""
from __future__ import annotations

from typing import Literal

Applied = Literal["yes", "no", "unknown"]
"""Whether a failed call's effect happened (protocol.md#coded-errors)."""


class AgentEnvError(Exception):
    """Raise it to answer a caller with a code rather than a crash.

    From a `@tool` it becomes an `isError` result whose text is `"<code>: <message>"` and whose
    structured content is `{code, message, retryable, applied, hint?}`; from an `@extension`, HTTP
    `status` with the body `{"ok": false, "error": {...}}`; from a data-plane handler, JSON-RPC
    error -32000 with `message`.
    """

    def __init__(self, code: str, message: str, *, retryable: bool = False, applied: Applied = "no",
                 hint: str | None = None, status: int = 400) -> None:
        if applied not in ("yes", "no", "unknown"):
            raise ValueError(f"applied must be 'yes', 'no' or 'unknown', not {applied!r}")
        if not 100 <= status <= 599:
            raise ValueError(f"status must be an HTTP status (100-599), not {status}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = retryable
        self.applied: Applied = applied
        self.hint = hint
        self.status = status


def described(error: BaseException) -> str:
    """`error` for a message, its type kept: `TypeError: Object of type set is not JSON
    serializable`, or the type's name alone when the error has no text."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
