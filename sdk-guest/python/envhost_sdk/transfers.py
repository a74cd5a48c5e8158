"""Uploading an export under the `write_namespace` grant of the `data/get` being served, shaped
like the reference's `agentenv_protocol.transfers` (docs/protocol.md#exports).

A `@get_data` handler that takes a `write_namespace` parameter declares
`urn:agentenv:data-objects/v1`; it is called with the caller's grant, or None when the caller sent
none. It uploads under the grant with a `NamespaceUploader` and answers `uploaded_file_part`s::

    @get_data
    async def export(self, write_namespace: Optional[WriteNamespaceGrant] = None) -> list:
        if write_namespace is None:
            return [DataPart(data=self.state)]
        await NamespaceUploader(write_namespace).upload("state.json", json.dumps(self.state).encode())
        return [uploaded_file_part("state.json", name="state.json", mime_type="application/json")]

The grant's URL and policy stay in the host: the guest sees only its limits. The host keeps the
bytes out of the guest's memory, checks the limits as the reference does before anything leaves
(a path uploaded again counts once, at its latest size), and tries an upload again while the grant
lasts when the store is unavailable or slow. A source is bytes, or an iterable of byte chunks
(an object written in chunks, never whole in memory); a guest has no files to name.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Union

from .parts import FilePart, FileWithUri

DATA_OBJECTS_EXTENSION_URI = "urn:agentenv:data-objects/v1"

_ERROR_STATUS: dict[str, tuple[int, bool]] = {
    "invalid_transfer": (400, False),
    "grant_expired": (410, False),
    "transfer_too_large": (413, False),
    "integrity_mismatch": (422, False),
    "transfer_rejected": (502, False),
    "transfer_unavailable": (502, True),
    "transfer_timeout": (504, True),
}


class TransferError(RuntimeError):
    """A failed transfer, with the reference's code, status and message: `invalid_transfer`,
    `grant_expired`, `transfer_too_large`, `integrity_mismatch`, `transfer_rejected`,
    `transfer_unavailable`, `transfer_timeout`."""

    def __init__(self, code: str, message: str, *, retryable: bool | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status_code, default_retryable = _ERROR_STATUS.get(code, (502, False))
        self.retryable = default_retryable if retryable is None else retryable

    def body(self) -> dict[str, object]:
        return {"error": {"code": self.code, "message": str(self), "retryable": self.retryable}}


@dataclass(frozen=True)
class WriteNamespaceGrant:
    """The caller's grant as the guest sees it: its limits (the URL and policy stay in the host)."""

    max_objects: int
    max_object_bytes: int
    max_total_bytes: int


@dataclass(frozen=True)
class Uploaded:
    """What an upload stored."""

    size_bytes: int
    sha256: str | None = None


Source = Union[bytes, bytearray, memoryview, Iterable[bytes]]
"""What an upload sends: bytes, or an iterable of byte chunks."""


def _host():
    try:
        from componentize_py_types import Err
        from wit_world.imports import upload
    except ImportError:
        raise TransferError("invalid_transfer", "No write_namespace grant: not running in envhost.") from None
    return upload, Err


def grant() -> WriteNamespaceGrant | None:
    """The grant of the `data/get` being served; None when its caller sent none (or outside a
    component)."""
    try:
        upload, _ = _host()
    except TransferError:
        return None
    limits = upload.grant()
    if limits is None:
        return None
    return WriteNamespaceGrant(limits.max_objects, limits.max_object_bytes, limits.max_total_bytes)


class NamespaceUploader:
    """Uploads objects under one namespace grant within its object and byte limits, one at a time
    (the reference's `NamespaceUploader`)."""

    def __init__(self, target: WriteNamespaceGrant) -> None:
        self.target = target

    async def upload(self, relative_path: str, source: Source) -> Uploaded:
        """Uploads or overwrites one relative path under the namespace root. Raises TransferError."""
        upload, err = _host()
        chunks = [bytes(source)] if isinstance(source, (bytes, bytearray, memoryview)) else source
        try:
            upload.begin(relative_path)
            for chunk in chunks:
                upload.write(bytes(chunk))
            stored = upload.finish()
        except err as e:
            raise TransferError(e.value.code, e.value.message, retryable=e.value.retryable) from None
        return Uploaded(stored.size_bytes, stored.sha256)


def uploaded_file_part(path: str, *, name: str | None = None, mime_type: str | None = None) -> FilePart:
    """The `data/get` answer naming an export uploaded through its `write_namespace` grant, at
    `path` relative to the grant's root (the reference's `uploaded_file_part`)."""
    if "\\" in path or any(s in ("", ".", "..") for s in path.split("/")):
        raise ValueError("must be a normalized relative POSIX path")
    return FilePart(file=FileWithUri(uri=path, name=name, mimeType=mime_type),
                    metadata={DATA_OBJECTS_EXTENSION_URI: {"path": path}})
