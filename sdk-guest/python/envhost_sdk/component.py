"""The component's `env` export: a `Runtime` bound to the bindings componentize-py generates.

An environment's app module ends with `Env = export(MyEnv)`; componentize-py looks for `Env` there
(`componentize-py -d wit/environment -w environment componentize app ...`). `export` reads the
class and creates its one instance while componentize-py pre-initialises the component, so both
are in the component's snapshot and an episode starts with them ready.

This module imports `wit_world`, which exists only while building or running a component.
"""
from __future__ import annotations

import json
from typing import Any

import componentize_py_types
from wit_world import exports
from wit_world.exports import env as wit_env
from wit_world.imports import types as wit
# Every host interface, imported while componentize-py pre-initialises the component: it bundles
# the binding modules imported then, and one first imported during a call is not found.
from wit_world.imports import client, context, log, progress, serving, upload  # noqa: F401

from .transfers import DATA_OBJECTS_EXTENSION_URI
from .environment import Description, ImageContent, Runtime, ToolOutcome
from .context import ToolContext
from .errors import AgentEnvError, described
from .parts import DataPart, FilePart, FileWithBytes, FileWithUri, Part, TextPart

_APPLIED = {"yes": wit.Applied.YES, "no": wit.Applied.NO, "unknown": wit.Applied.UNKNOWN}
_OPERATIONS = {"reset": wit_env.Operation.RESET, "add": wit_env.Operation.ADD, "get": wit_env.Operation.GET}


def _err(error: AgentEnvError) -> componentize_py_types.Err[wit.EnvError]:
    return componentize_py_types.Err(wit.EnvError(
        code=error.code, message=error.message, retryable=error.retryable,
        applied=_APPLIED[error.applied], hint=error.hint, status=error.status,
    ))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _metadata_in(text: str | None) -> dict[str, Any] | None:
    return json.loads(text) if text is not None else None


def _metadata_out(metadata: dict[str, Any] | None) -> str | None:
    return _json(metadata) if metadata is not None else None


def part_in(part: wit.Part) -> Part:
    """A WIT part as the SDK's part."""
    if isinstance(part, wit.Part_Text):
        return TextPart(part.value.text, _metadata_in(part.value.metadata))
    if isinstance(part, wit.Part_Data):
        return DataPart(json.loads(part.value.data), _metadata_in(part.value.metadata))
    f = part.value
    content = f.file
    file = (FileWithBytes(content=content.value, mimeType=f.mime_type, name=f.name)
            if isinstance(content, wit.FileContent_Bytes) else FileWithUri(content.value, f.mime_type, f.name))
    return FilePart(file, _metadata_in(f.metadata))


def part_out(part: Part) -> wit.Part:
    """The SDK's part as a WIT part; raises `AgentEnvError("invalid_part")` for anything else."""
    if isinstance(part, TextPart):
        return wit.Part_Text(wit.TextPart(part.text, _metadata_out(part.metadata)))
    if isinstance(part, DataPart):
        if not isinstance(part.data, dict):
            raise AgentEnvError("invalid_part", "a data part holds a JSON object")
        return wit.Part_Data(wit.DataPart(_json(part.data), _metadata_out(part.metadata)))
    if isinstance(part, FilePart):
        f = part.file
        content: wit.FileContent = (wit.FileContent_Bytes(f.content) if isinstance(f, FileWithBytes)
                                    else wit.FileContent_Uri(f.uri))
        return wit.Part_File(wit.FilePart(content, f.mimeType, f.name, _metadata_out(part.metadata)))
    raise AgentEnvError("invalid_part", f"not a part: {type(part).__name__}")


def _annotations(annotations: dict[str, Any] | None) -> wit_env.ToolAnnotations | None:
    if annotations is None:
        return None
    return wit_env.ToolAnnotations(
        title=annotations.get("title"), read_only_hint=annotations.get("readOnlyHint"),
        destructive_hint=annotations.get("destructiveHint"), idempotent_hint=annotations.get("idempotentHint"),
        open_world_hint=annotations.get("openWorldHint"),
    )


def env_info(description: Description) -> wit_env.EnvInfo:
    """A description as the WIT `env-info`."""
    tools = [wit_env.ToolInfo(
        name=t.name, description=t.description, input_schema=_json(t.input_schema),
        output_schema=_json(t.output_schema) if t.output_schema is not None else None,
        annotations=_annotations(t.annotations), meta=_json(t.meta) if t.meta is not None else None,
        hidden_by_default=t.hidden_by_default,
    ) for t in description.tools]
    def params(uri: str) -> str | None:
        given = description.extension_params.get(uri) or description.declared_params.get(uri, (None,))[0]
        return _json(given) if given else None

    extensions = [wit_env.ExtensionInfo(
        uri=e.uri, description=e.description, params=params(e.uri),
        required=description.declared_params.get(e.uri, (None, None))[1],
        layout=wit_env.ExtensionLayout.PER_METHOD if e.per_method else wit_env.ExtensionLayout.SINGLE,
        methods=[wit_env.ExtensionMethod(m.op, m.http_method, _json(m.request_schema), m.path) for m in e.methods],
    ) for e in description.extensions]
    if description.exports:
        extensions.append(wit_env.ExtensionInfo(
            uri=DATA_OBJECTS_EXTENSION_URI, description=None, params=None, required=None,
            layout=wit_env.ExtensionLayout.SINGLE, methods=[]))
    return wit_env.EnvInfo(name=description.name, tools=tools, extensions=extensions,
                           operations=[_OPERATIONS[o] for o in description.operations],
                           tool_access=description.tool_access)


def _block(block: str | ImageContent | dict) -> wit_env.ContentBlock:
    if isinstance(block, dict):
        return wit_env.ContentBlock_Block(_json(block))
    if isinstance(block, ImageContent):
        return wit_env.ContentBlock_Image(wit_env.ImageContent(block.data, block.mime_type))
    return wit_env.ContentBlock_Text(block)


def tool_result(outcome: ToolOutcome) -> wit_env.ToolResult:
    """A tool's outcome as the WIT `tool-result`."""
    structured = _json(outcome.structured_content) if outcome.structured_content is not None else None
    meta = _json(outcome.meta) if outcome.meta is not None else None
    return wit_env.ToolResult([_block(b) for b in outcome.content], structured, outcome.is_error, meta)


def export(cls: type) -> type:
    """The class componentize-py exports as `env`, serving one instance of the environment class
    `cls`. Raises TypeError (at build time) when `cls` cannot be served."""
    runtime = Runtime(cls)
    info = env_info(runtime.description)

    class Env(exports.Env):
        """The `env` export of the environment. An exception the environment's own code lets out
        of the SDK (a value that is not JSON, a part that is not a part) is answered as the SDK
        answers one raised inside a handler, with its type kept in the message, rather than
        trapping the instance."""

        def describe(self) -> wit_env.EnvInfo:
            return info

        def reset(self) -> None:
            try:
                runtime.reset()
            except AgentEnvError as e:
                raise _err(e) from None
            except Exception as e:
                raise _err(AgentEnvError("reset_failed", described(e))) from None

        def add_data(self, parts: list[wit.Part]) -> None:
            try:
                runtime.add_data([part_in(p) for p in parts])
            except AgentEnvError as e:
                raise _err(e) from None
            except Exception as e:
                raise _err(AgentEnvError("add_failed", described(e))) from None

        def get_data(self) -> list[wit.Part]:
            try:
                return [part_out(p) for p in runtime.get_data()]
            except AgentEnvError as e:
                raise _err(e) from None
            except Exception as e:
                raise _err(AgentEnvError("get_failed", described(e))) from None

        def call_tool(self, name: str, arguments: str) -> wit_env.ToolResult:
            try:
                return tool_result(runtime.call_tool(name, json.loads(arguments)))
            except AgentEnvError as e:
                raise _err(e) from None
            except Exception as e:
                text = f"Error executing tool {ToolContext.current().tool or name}: {described(e)}"
                return tool_result(ToolOutcome([text], None, is_error=True))

        def call_extension(self, uri: str, op: str, request: str) -> str:
            try:
                return _json(runtime.call_extension(uri, op, json.loads(request)))
            except AgentEnvError as e:
                raise _err(e) from None
            except Exception as e:
                failed = AgentEnvError("extension_failed", described(e), applied="unknown", status=500)
                raise _err(failed) from None

        def call_mcp(self, method: str, params: str) -> str:
            try:
                return _json(runtime.call_mcp(method, json.loads(params)))
            except AgentEnvError as e:
                raise _err(e) from None
            except Exception as e:
                raise _err(AgentEnvError("internal_error", described(e), status=500)) from None

    Env.__qualname__ = Env.__name__ = "Env"
    return Env
