"""The reference SDK's mount-time hooks (`served_tools`, `served_extensions`,
`served_operations`, `extension_params`, `declared_extensions`), applied to a description once
the environment's instance exists, and the descriptors they take and return, shaped like the
reference's `EnvironmentTool` and `EnvironmentExtension` models.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .environment import Description

_NAME_TOKEN = "{environment_name}"
_OPERATIONS = {"reset": "data/reset", "add": "data/add", "get": "data/get"}


class _Copyable:
    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        """A copy with the fields in `update` replaced, as pydantic's `model_copy`."""
        return dataclasses.replace(self, **(update or {}))


@dataclass(frozen=True)
class EnvironmentTool(_Copyable):
    """A tool as `served_tools` sees it: its served name, description and input schema."""

    name: str
    description: str | None = None
    inputSchema: dict | None = None  # noqa: N815 -- the card's field name


@dataclass(frozen=True)
class EnvironmentExtension(_Copyable):
    """An extension's card entry: as `served_extensions` sees it, and as `declared_extensions`
    returns a declaration-only one (`urn:agentenv:intake/v1`, say)."""

    uri: str
    description: str | None = None
    params: dict | None = None
    required: bool | None = None


def update_tool(name: str, description: str) -> None:
    """Changes tool `name`'s description for this episode through the host. Raises ValueError
    for no such tool, and outside a component."""
    try:
        from componentize_py_types import Err
        from wit_world.imports import serving as host
    except ImportError:
        raise ValueError("tool descriptions change only in a component served by envhost") from None
    try:
        host.update_tool(name, description)
    except Err as e:
        raise ValueError(e.value) from None


def _hook(instance: Any, name: str) -> Any:
    """The instance's own override of hook `name`, or None."""
    from .environment import AgentEnvEnvironment

    method = getattr(type(instance), name, None)
    if method is None or method is getattr(AgentEnvEnvironment, name, None):
        return None
    return getattr(instance, name)


def apply(description: Description, instance: Any) -> Description:
    """`description` as `instance`'s hooks choose what is served. Raises ValueError for a hook
    that returns something with no handler, as the reference refuses it at mount."""
    from .environment import ExtensionDescription

    params = _hook(instance, "extension_params")
    extra: dict[str, dict] = {}
    if params is not None:
        for ext in description.extensions:
            if ext.per_method:
                extra[ext.uri] = dict(params(ext.uri) or {})
    description.extension_params = extra

    if (served := _hook(instance, "served_tools")) is not None:
        by_name = {t.name.replace(_NAME_TOKEN, description.name): t for t in description.tools}
        chosen = list(served([EnvironmentTool(n, t.description, t.input_schema) for n, t in by_name.items()]))
        unknown = sorted({c.name for c in chosen} - set(by_name))
        if unknown:
            raise ValueError(f"served_tools returned tools with no @tool method: {unknown}")
        description.tools = [dataclasses.replace(by_name[c.name], description=c.description) for c in chosen]

    if (served := _hook(instance, "served_extensions")) is not None:
        offered = [EnvironmentExtension(e.uri, e.description, {
            **extra.get(e.uri, {}),
            "methods": {m.op: {"method": m.http_method, "request": m.request_schema} for m in e.methods}},
        ) if e.per_method else EnvironmentExtension(e.uri, e.description) for e in description.extensions]
        chosen = {c.uri: c for c in served(offered)}
        by_uri = {e.uri: e for e in description.extensions}
        unknown = sorted(set(chosen) - set(by_uri))
        if unknown:
            raise ValueError(f"served_extensions returned extensions with no @extension handler: {unknown}")
        kept = []
        for ext in description.extensions:
            if (choice := chosen.get(ext.uri)) is None:
                continue
            methods = ext.methods
            if ext.per_method:
                listed = set(((choice.params or {}).get("methods") or {}))
                added = sorted(listed - {m.op for m in ext.methods})
                if added:
                    raise ValueError(f"served_extensions lists methods of {ext.uri} with no @extension handler: "
                                     f"{added}")
                methods = [m for m in ext.methods if m.op in listed]
                extra[ext.uri] = {k: v for k, v in (choice.params or {}).items() if k != "methods"}
            kept.append(dataclasses.replace(ext, description=choice.description, methods=methods))
        description.extensions = kept

    if (served := _hook(instance, "served_operations")) is not None:
        offered = [_OPERATIONS[o] for o in description.operations]
        chosen = set(served(list(offered)))
        unknown = sorted(chosen - set(offered))
        if unknown:
            raise ValueError(f"served_operations returned operations with no handler: {unknown}")
        description.operations = [o for o in description.operations if _OPERATIONS[o] in chosen]

    if (declared := _hook(instance, "declared_extensions")) is not None:
        entries = list(declared())
        clash = sorted(d.uri for d in entries if any(e.uri == d.uri for e in description.extensions))
        if clash:
            raise ValueError(f"extensions both declared and served by a handler: {clash}")
        for entry in entries:
            description.extensions.append(ExtensionDescription(entry.uri, entry.description, False, []))
            description.declared_params[entry.uri] = (entry.params, entry.required)
    return description
