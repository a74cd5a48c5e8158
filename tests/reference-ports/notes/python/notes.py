"""A notebook written for the reference SDK (agentenv-framework-protocol), using what slack and
tickets do not: an export through a `write_namespace` grant (`data/get` uploading every note with a
`NamespaceUploader` and answering `uploaded_file_part`s), file parts with inline base64 bytes in
`data/add`, a tool that changes another's description at run time (`update_tool`), mount hooks
choosing the data-plane methods and the extension methods served (`served_operations`,
`served_extensions`), async tools, a verbatim audio result, and `Optional` parameters.

Run on the reference: MCP_HOST=127.0.0.1 MCP_PORT=18765 python reference.py
The envhost port (python/notes.py) is this file with its imports changed.
"""
from __future__ import annotations

import base64
import json
from typing import Annotated, Optional

from envhost_sdk.types import AudioContent, CallToolResult, TextContent
from typing import TypedDict

from envhost_sdk import (
    AgentEnvEnvironment,
    AgentEnvError,
    DataPart,
    Field,
    FilePart,
    TextPart,
    ToolContext,
    add_data,
    environment_card,
    extension,
    get_data,
    tool,
)
from envhost_sdk.transfers import NamespaceUploader, WriteNamespaceGrant
from envhost_sdk.types import FileWithBytes, uploaded_file_part

ARCHIVE_URI = "urn:example:notes-archive/v1"
LABS_URI = "urn:example:notes-labs/v1"
#: A WAV header with no samples: what a note sounds like.
SILENCE = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00"
                           b"\x80>\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00").decode()


class Note(TypedDict):
    id: int
    title: str
    body: str
    tags: list[str]


@environment_card(name="notes")
class Notes(AgentEnvEnvironment):
    def __init__(self) -> None:
        self.notes: list[dict] = []

    # ---------------------------------------------------------------- mount hooks

    def served_operations(self, operations: list[str]) -> list[str]:
        return [op for op in operations if op != "data/reset"]

    def served_extensions(self, extensions: list) -> list:
        served = []
        for ext in extensions:
            if ext.uri == LABS_URI:
                continue
            methods = {op: m for op, m in (ext.params or {}).get("methods", {}).items() if op != "purge"}
            served.append(ext.model_copy(update={"params": {**(ext.params or {}), "methods": methods}}))
        return served

    # ---------------------------------------------------------------- data plane

    @add_data
    def add(self, parts: list) -> None:
        notes = list(self.notes)
        for part in parts:
            if isinstance(part, TextPart):
                notes.append(self._note(len(notes) + 1, "text", part.text, []))
            elif isinstance(part, DataPart):
                for note in part.data.get("notes", []):
                    notes.append(self._note(len(notes) + 1, str(note["title"]), str(note.get("body", "")),
                                            [str(t) for t in note.get("tags", [])]))
            elif isinstance(part, FilePart) and isinstance(part.file, FileWithBytes):
                body = base64.b64decode(part.file.bytes, validate=True).decode("utf-8")
                notes.append(self._note(len(notes) + 1, part.file.name or "file", body, ["file"]))
            else:
                raise ValueError("notes load from text, data and inline file parts")
        self.notes = notes

    @get_data
    async def get(self, write_namespace: Optional[WriteNamespaceGrant] = None) -> list:
        if write_namespace is None:
            return [DataPart(data={"notes": self.notes})]
        uploader = NamespaceUploader(write_namespace)
        parts = []
        for note in self.notes:
            path = f"notes/{note['id']}.md"
            await uploader.upload(path, f"# {note['title']}\n\n{note['body']}\n".encode())
            parts.append(uploaded_file_part(path, name=f"{note['id']}.md", mime_type="text/markdown"))
        await uploader.upload("index.json", json.dumps([n["title"] for n in self.notes]).encode())
        parts.append(uploaded_file_part("index.json", mime_type="application/json"))
        return parts

    @staticmethod
    def _note(id: int, title: str, body: str, tags: list[str]) -> dict:
        return {"id": id, "title": title, "body": body, "tags": tags}

    # ---------------------------------------------------------------- tools

    @tool(name="{environment_name}_write")
    async def write(self, title: Annotated[str, Field(description="The note's title.")], body: str,
                    tags: Optional[list[str]] = None) -> Note:
        """Writes a note."""
        note = self._note(len(self.notes) + 1, title, body, tags or [])
        self.notes.append(note)
        return note

    @tool(name="{environment_name}_find", annotations={"readOnlyHint": True})
    def find(self, query: str, limit: Optional[int] = None, tag: Optional[str] = None) -> list[Note]:
        """Finds notes whose title or body holds the query."""
        found = [n for n in self.notes if (query.lower() in (n["title"] + " " + n["body"]).lower())
                 and (tag is None or tag in n["tags"])]
        return found if limit is None else found[:limit]

    @tool(name="{environment_name}_read_aloud")
    def read_aloud(self, id: int) -> CallToolResult:
        """Reads a note aloud."""
        for note in self.notes:
            if note["id"] == id:
                return CallToolResult(content=[TextContent(type="text", text=note["title"]),
                                               AudioContent(type="audio", data=SILENCE, mimeType="audio/wav")])
        return CallToolResult(content=[TextContent(type="text", text=f"no note {id}")], isError=True)

    @tool(name="{environment_name}_focus")
    async def focus(self, ctx: ToolContext, topic: str) -> str:
        """Points the find tool at a topic."""
        find = ctx.tool.removesuffix("_focus") + "_find"
        await self.update_tool(find, description=f"Finds notes about {topic}.")
        return f"{find} now looks for {topic}"

    # ---------------------------------------------------------------- extensions

    @extension(ARCHIVE_URI, op="count", method="GET", description="The notebook's archive.")
    def count(self) -> dict:
        return {"notes": len(self.notes)}

    @extension(ARCHIVE_URI, op="tag", method="POST")
    def tag(self, id: int, tag: str) -> dict:
        for note in self.notes:
            if note["id"] == id:
                note["tags"].append(tag)
                return {"id": id, "tags": note["tags"]}
        raise AgentEnvError("note_not_found", f"no note {id}", status=404, hint="list them with data/get")

    @extension(ARCHIVE_URI, op="purge", method="POST")
    def purge(self) -> dict:
        self.notes = []
        return {"notes": 0}

    @extension(LABS_URI, op="shuffle", method="POST", description="Not served.")
    def shuffle(self) -> dict:
        self.notes.reverse()
        return {"notes": len(self.notes)}


if __name__ == "__main__":
    Notes().serve()
