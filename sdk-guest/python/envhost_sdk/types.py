"""MCP's result types, shaped like the `mcp.types` models a reference environment returns
verbatim from a tool (docs/protocol.md#tool-results): `CallToolResult` with `TextContent`,
`ImageContent`, `AudioContent`, `EmbeddedResource` and `ResourceLink` blocks. A tool that returns
a `CallToolResult` is answered with it as it is: its blocks, `structuredContent`, `isError` and
`_meta` (`meta=` here, as pydantic's alias allows), with no output validation, as the reference's
MCP server answers one. Port by changing `from mcp.types import ...` to
`from envhost_sdk.types import ...`: `mcp` itself needs pydantic-core, native code a component
cannot load.

The reference's wire types of the data plane (`agentenv_protocol.types`: the parts,
`uploaded_file_part`, `DATA_OBJECTS_EXTENSION_URI`) are here too, so that
`from agentenv_protocol.types import ...` ports the same way.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .parts import DataPart, FilePart, FileWithBytes, FileWithUri, Part, TextPart
from .transfers import DATA_OBJECTS_EXTENSION_URI, uploaded_file_part

__all__ = [
    "AudioContent", "CallToolResult", "DATA_OBJECTS_EXTENSION_URI", "DataPart", "EmbeddedResource", "FilePart",
    "FileWithBytes", "FileWithUri", "ImageContent", "Part", "ResourceLink", "TextContent", "TextPart",
    "uploaded_file_part",
]


def _dump(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A block as MCP's models dump it: their field order, nulls dropped."""
    return {k: v for k, v in pairs if v is not None}


@dataclass
class TextContent:
    """A text block."""

    text: str
    type: str = "text"
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return _dump([("type", self.type), ("text", self.text), ("annotations", self.annotations),
                      ("_meta", self.meta)])


@dataclass
class _MediaContent:
    """A block of base64-encoded `data` of a media type."""

    data: str
    mimeType: str  # noqa: N815 -- MCP's field name
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    type: str = ""

    def to_json(self) -> dict[str, Any]:
        return _dump([("type", self.type), ("data", self.data), ("mimeType", self.mimeType),
                      ("annotations", self.annotations), ("_meta", self.meta)])


@dataclass
class ImageContent(_MediaContent):
    """An image block: `data` base64-encoded."""

    type: str = "image"


@dataclass
class AudioContent(_MediaContent):
    """An audio block: `data` base64-encoded."""

    type: str = "audio"


@dataclass
class EmbeddedResource:
    """An embedded resource: `resource` is `{"uri", "mimeType"?, "text"}` or `{"uri", "mimeType"?,
    "blob"}`."""

    resource: dict[str, Any]
    type: str = "resource"
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return _dump([("type", self.type), ("resource", self.resource), ("annotations", self.annotations),
                      ("_meta", self.meta)])


@dataclass
class ResourceLink:
    """A link to a resource."""

    name: str
    uri: str
    type: str = "resource_link"
    title: str | None = None
    description: str | None = None
    mimeType: str | None = None  # noqa: N815 -- MCP's field name
    size: int | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return _dump([("name", self.name), ("title", self.title), ("uri", self.uri),
                      ("description", self.description), ("mimeType", self.mimeType), ("size", self.size),
                      ("annotations", self.annotations), ("_meta", self.meta), ("type", self.type)])


ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink


@dataclass
class CallToolResult:
    """A tool's whole result, answered as it is."""

    content: list[ContentBlock] = field(default_factory=list)
    structuredContent: dict[str, Any] | None = None  # noqa: N815 -- MCP's field name
    isError: bool = False  # noqa: N815 -- MCP's field name
    meta: dict[str, Any] | None = None
