"""Data-plane parts (protocol.md#parts), as `@add_data` receives them and `@get_data` returns them.

Unlike the reference SDK, a file part's content always arrives as raw bytes: the host has already
decoded inline base64 and fetched `file://`, `http://` and `https://` URIs (within its limits and
data roots), so an environment never does I/O of its own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class TextPart:
    """Plain text."""

    text: str
    metadata: dict[str, Any] | None = None


@dataclass
class DataPart:
    """A JSON object."""

    data: dict[str, Any]
    metadata: dict[str, Any] | None = None


@dataclass
class FileWithBytes:
    """A file's content: raw bytes (never base64: the host decoded them)."""

    bytes: bytes
    mime_type: str | None = None
    name: str | None = None


@dataclass
class FileWithUri:
    """A file by reference, for `@get_data` answers that point at content rather than carry it."""

    uri: str
    mime_type: str | None = None
    name: str | None = None


@dataclass
class FilePart:
    """A file."""

    file: FileWithBytes | FileWithUri
    metadata: dict[str, Any] | None = None


Part = TextPart | DataPart | FilePart
"""A part of data-plane content."""
