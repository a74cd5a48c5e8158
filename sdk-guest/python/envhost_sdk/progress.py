"""Progress of the tool call being served, sent to an MCP caller that asked for it (a request
with a `progressToken`) as `notifications/progress`; a no-op otherwise, and outside a component."""
from __future__ import annotations


def report(progress: float, total: float | None = None, message: str | None = None) -> None:
    """Reports `progress` (growing with each report) out of `total`, when known."""
    try:
        from wit_world.imports import progress as host
    except ImportError:
        return
    host.report(float(progress), float(total) if total is not None else None, message)
