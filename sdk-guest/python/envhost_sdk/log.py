"""Structured records into the host's log (the host may drop records beyond a rate limit)."""
from __future__ import annotations

import json
from typing import Any, Literal

Level = Literal["trace", "debug", "info", "warn", "error"]


def write(level: Level, message: str, fields: dict[str, Any] | None = None) -> None:
    """Writes one record; `fields` is a JSON object of structured fields. Outside a component
    (no host to write to) the record is dropped."""
    try:
        from wit_world.imports import log
    except ImportError:
        return
    levels = {"trace": log.Level.TRACE, "debug": log.Level.DEBUG, "info": log.Level.INFO,
              "warn": log.Level.WARN, "error": log.Level.ERROR}
    log.write(levels[level], message, json.dumps(fields) if fields is not None else None)


def debug(message: str, fields: dict[str, Any] | None = None) -> None:
    """Writes a debug record."""
    write("debug", message, fields)


def info(message: str, fields: dict[str, Any] | None = None) -> None:
    """Writes an info record."""
    write("info", message, fields)


def warn(message: str, fields: dict[str, Any] | None = None) -> None:
    """Writes a warning."""
    write("warn", message, fields)


def error(message: str, fields: dict[str, Any] | None = None) -> None:
    """Writes an error record."""
    write("error", message, fields)
