"""Data-plane parts (protocol.md#parts), as `@add_data` receives them and `@get_data` returns them,
with the reference SDK's field names (`agentenv_protocol.types`).

A file part's content arrives inline: the host has already fetched `file://`, `http://` and
`https://` URIs and read grants (within its limits and data roots), so an environment never does
I/O of its own. `FileWithBytes.bytes` is the content as base64 text, as the reference hands it;
`FileWithBytes.content` is the same content as raw bytes, without a base64 round trip.
"""
from __future__ import annotations

import base64
import builtins
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


class FileWithBytes:
    """A file's content inline: `bytes` is base64 text (the reference's field), `content` the raw
    bytes. Give either: `FileWithBytes(bytes="eyJ9", mimeType=...)` or
    `FileWithBytes(content=b"{}", mimeType=...)`; the other is made on first use.

    Raises `TypeError` when neither or both are given, or when `bytes` is not text (raw bytes go
    in `content`); reading `content` raises `binascii.Error` when `bytes` is not base64.
    """

    __slots__ = ("_base64", "_content", "mimeType", "name")

    def __init__(self, bytes: str | None = None, mimeType: str | None = None,  # noqa: N803 -- the reference's names
                 name: str | None = None, *, content: builtins.bytes | None = None) -> None:
        if (bytes is None) == (content is None):
            raise TypeError("FileWithBytes takes bytes (base64 text) or content (raw bytes), one of them")
        if bytes is not None and not isinstance(bytes, str):
            raise TypeError("FileWithBytes.bytes is base64 text, as in the reference: give raw bytes as content=")
        self._base64 = bytes
        self._content = content
        self.mimeType = mimeType  # noqa: N815 -- the reference's field name
        self.name = name

    @property
    def bytes(self) -> str:
        """The content as base64 text."""
        if self._base64 is None:
            self._base64 = base64.b64encode(self._content).decode("ascii")
        return self._base64

    @property
    def content(self) -> builtins.bytes:
        """The content as raw bytes."""
        if self._content is None:
            self._content = base64.b64decode(self._base64, validate=True)
        return self._content

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileWithBytes):
            return NotImplemented
        return (self.content, self.mimeType, self.name) == (other.content, other.mimeType, other.name)

    def __repr__(self) -> str:
        return f"FileWithBytes(<{len(self.content)} bytes>, mimeType={self.mimeType!r}, name={self.name!r})"


@dataclass
class FileWithUri:
    """A file by reference, for `@get_data` answers that point at content rather than carry it."""

    uri: str
    mimeType: str | None = None  # noqa: N815 -- the reference's field name
    name: str | None = None


@dataclass
class FilePart:
    """A file."""

    file: FileWithBytes | FileWithUri
    metadata: dict[str, Any] | None = None


Part = TextPart | DataPart | FilePart
"""A part of data-plane content."""
