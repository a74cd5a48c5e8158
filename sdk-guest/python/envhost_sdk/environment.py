"""The decorators an environment is written with, and what they describe.

`@tool`, `@extension`, `@reset_data`, `@add_data` and `@get_data` mark methods of an
`AgentEnvEnvironment` subclass, as in the reference SDK; `@environment_card(name=...)` names it.
`Runtime` reads a class once (its tools, schemas, extensions, data-plane handlers) and serves one
instance of it: plain Python values in and out, so everything here runs, and is tested, outside a
component too. `envhost_sdk.component` binds a `Runtime` to the WIT exports.
"""
from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_args, get_origin

from . import schema as sch
from . import serving, transfers
from .context import ToolContext
from .errors import AgentEnvError
from .parts import Part
from .serving import EnvironmentExtension, EnvironmentTool
from .transfers import TransferError
from .types import CallToolResult

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

ANNOTATION_KEYS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""The MCP `ToolAnnotations` keys `@tool(annotations=...)` accepts."""

_TOOL, _EXTENSION, _DATA = "__envhost_tool__", "__envhost_extension__", "__envhost_data__"
_CARD_NAME = "__envhost_card_name__"


class AgentEnvEnvironment:
    """Base class of an environment. One instance lives for a whole episode; the host calls one
    method at a time. Set `tool_access = True` to have the host enforce per-role tool access
    (protocol.md#tool-access) and serve `/tools/disable` and `/tools/enable`."""

    tool_access: bool = False

    # The reference SDK's hooks, with its defaults; override them to choose what is served.

    def served_tools(self, tools: list[EnvironmentTool]) -> list[EnvironmentTool]:
        """The `@tool` methods to serve, in order; a returned descriptor's description replaces the
        marked one."""
        return tools

    def served_extensions(self, extensions: list[EnvironmentExtension]) -> list[EnvironmentExtension]:
        """The `@extension` handlers' extensions to serve: one left out is not served, and of one
        served with `op`, only the methods its returned descriptor still lists."""
        return extensions

    def served_operations(self, operations: list[str]) -> list[str]:
        """The data-plane methods to serve (`data/reset`, `data/add`, `data/get`)."""
        return operations

    def extension_params(self, uri: str) -> dict:
        """Extension-level params (features, limits) advertised beside the methods of an extension
        served with `op`."""
        return {}

    def declared_extensions(self) -> list[EnvironmentExtension]:
        """Declaration-only extensions to advertise, like `urn:agentenv:intake/v1`."""
        return []

    async def update_tool(self, name: str, *, description: str) -> None:
        """Changes a served tool's description for this episode: its card entry and tools/list
        change together (docs/protocol.md#tool-updates). Raises ValueError for no such tool."""
        serving.update_tool(name, description)

    def on_tool_call(self, context: ToolContext) -> Any:
        """Runs before every tool call: None lets it proceed; a `CallToolResult`
        (`envhost_sdk.types`; `isError=True` for a refusal) is the call's answer instead."""
        return None


# ---------------------------------------------------------------------------------- decorators

@dataclass(frozen=True)
class ToolOptions:
    """What `@tool(...)` was given."""

    name: str | None
    description: str | None
    annotations: dict[str, Any] | None
    meta: dict[str, Any] | None
    hidden_by_default: bool
    structured_output: bool | None


@dataclass(frozen=True)
class ExtensionOptions:
    """What `@extension(...)` was given."""

    uri: str
    op: str | None
    method: str
    description: str | None
    path: str | None


def tool(name: str | Callable[..., Any] | None = None, *, description: str | None = None,
         annotations: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
         hidden_by_default: bool = False, structured_output: bool | None = None) -> Any:
    """Marks a method as an MCP tool (usable bare, `@tool`, or called, `@tool(name=...)`).

    - `name`: the tool's name, `{environment_name}` replaced by the card's name; default the
      method's name.
    - `description`: default the method's docstring.
    - `annotations`: MCP `ToolAnnotations` keys (`readOnlyHint`, `title`, ...).
    - `meta`: the tool's `_meta` object.
    - `hidden_by_default`: hidden from every role until a tool-access rule names it (protocol.md#visibility).
    - `structured_output`: None derives an output schema from the return annotation where it can
      (as mcp's FastMCP does), False lists none, True requires one.

    The input schema comes from the parameters' type hints; `Annotated[T, Field(description=...)]`
    describes one. A parameter annotated `ToolContext` receives the call's context instead.
    """
    if callable(name):
        return tool()(name)
    if annotations is not None:
        unknown = sorted(set(annotations) - set(ANNOTATION_KEYS))
        if unknown:
            raise TypeError(f"@tool: unknown annotation keys {unknown}; allowed: {list(ANNOTATION_KEYS)}")
    options = ToolOptions(name, description, annotations, meta, hidden_by_default, structured_output)

    def mark(fn: F) -> F:
        setattr(fn, _TOOL, options)
        return fn
    return mark


def extension(uri: str, *, op: str | None = None, method: str = "POST", description: str | None = None,
              path: str | None = None) -> Callable[[F], F]:
    """Marks a method as an extension method of `uri` (protocol.md#extensions).

    With `op`, each method gets its own route `/agentenv/ext/<slug>/<op>` (handlers sharing a URI
    merge into one card entry); without, the extension has this one method, named after the
    handler. `method` is the HTTP verb (GET methods take their request from the query string);
    `path` replaces the default route. The parameters, from their type hints, are the request's
    keys; a parameter annotated `ToolContext` receives the call's context instead.
    """
    options = ExtensionOptions(uri, op, method.upper(), description, path)

    def mark(fn: F) -> F:
        setattr(fn, _EXTENSION, options)
        return fn
    return mark


def _data_marker(operation: str) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        setattr(fn, _DATA, operation)
        return fn
    return mark


reset_data = _data_marker("reset")
"""Marks the `data/reset` handler: `def reset(self) -> None`."""
add_data = _data_marker("add")
"""Marks the `data/add` handler: `def add(self, parts: list[Part]) -> None`; load all or none."""
get_data = _data_marker("get")
"""Marks the `data/get` handler: `def get(self) -> list[Part]`."""
mcp_requests = _data_marker("mcp")
"""Marks the handler of MCP requests beyond tools (resources, templates, prompts, completions):
`def mcp(self, method: str, params: dict) -> dict`, answering the method's result object; raise
AgentEnvError `resource_not_found`, `invalid_params` or `method_not_found` (docs/protocol.md)."""


def environment_card(name: str | None = None, **unsupported: Any) -> Callable[[C], C]:
    """Names the environment: the card's `name`, and the `{environment_name}` of its tool names
    (unless the host's `ENVIRONMENT_NAME` overrides it). Undecorated, a class is named after
    itself. The host builds the rest of the card, so other card fields are refused."""
    if unsupported:
        raise TypeError(f"@environment_card: only `name` is supported here (the host builds the rest of the "
                        f"card), not {sorted(unsupported)}")

    def mark(cls: C) -> C:
        setattr(cls, _CARD_NAME, name or cls.__name__)
        return cls
    return mark


# ---------------------------------------------------------------------------------- descriptions

@dataclass(frozen=True)
class Param:
    """A parameter the caller supplies."""

    name: str
    hint: Any
    default: Any
    required: bool


@dataclass(frozen=True)
class Signature:
    """A tool's or extension method's parameters: the caller's, and the one filled with the
    context (if any)."""

    params: list[Param]
    context_param: str | None


OUTPUT_OBJECT, OUTPUT_WRAPPED = "object", "wrapped"


@dataclass
class ToolDescription:
    """One tool as served (the WIT `tool-info`, as plain values)."""

    name: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any] | None
    meta: dict[str, Any] | None
    hidden_by_default: bool
    method: str
    signature: Signature
    output_shape: str | None


@dataclass
class ExtensionMethodDescription:
    """One method of an extension (the WIT `extension-method`)."""

    op: str
    http_method: str
    request_schema: dict[str, Any]
    path: str | None
    handler: str
    signature: Signature


@dataclass
class ExtensionDescription:
    """One extension (the WIT `extension-info`); `per_method` is its layout."""

    uri: str
    description: str | None
    per_method: bool
    methods: list[ExtensionMethodDescription] = field(default_factory=list)


@dataclass
class Description:
    """Everything the host needs to serve an environment class (the WIT `env-info`)."""

    name: str
    tools: list[ToolDescription]
    extensions: list[ExtensionDescription]
    operations: list[str]
    tool_access: bool
    data_handlers: dict[str, str]
    exports: bool = False
    """Whether the `data/get` handler takes a `write_namespace` grant (declares data-objects/v1)."""
    extension_params: dict[str, dict] = field(default_factory=dict)
    """The extension-level params of extensions served with `op`, by URI (`extension_params`)."""
    declared_params: dict[str, tuple[dict | None, bool | None]] = field(default_factory=dict)
    """The params and `required` of declaration-only extensions, by URI (`declared_extensions`)."""


def _is_context(hint: Any) -> bool:
    return hint is ToolContext or hint == "ToolContext"


def _signature(fn: Callable[..., Any], what: str) -> Signature:
    hints = sch.resolved_hints(fn)
    params: list[Param] = []
    context_param = None
    for index, p in enumerate(inspect.signature(fn).parameters.values()):
        if index == 0 and p.name == "self":
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{what}: *args and **kwargs cannot be described as tool parameters")
        if p.name not in hints:
            raise TypeError(f"{what}: parameter {p.name!r} needs a type hint")
        hint = hints[p.name]
        if _is_context(hint):
            context_param = p.name
            continue
        _, metadata = sch.strip_annotated(hint)
        field_ = sch.field_of(metadata)
        default = p.default if p.default is not p.empty else sch.NOTHING
        if default is sch.NOTHING and field_ is not None and field_.has_default:
            default = field_.default
        params.append(Param(p.name, hint, default, default is sch.NOTHING))
    return Signature(params, context_param)


def _properties(signature: Signature) -> list[sch.Property]:
    props = []
    for p in signature.params:
        inner, metadata = sch.strip_annotated(p.hint)
        field_ = sch.field_of(metadata)
        props.append(sch.Property(p.name, inner, p.required, p.default,
                                  field_.description if field_ else None, field_.title if field_ else None))
    return props


def input_schema(fn: Callable[..., Any], signature: Signature) -> dict[str, Any]:
    """A tool's input schema, as pydantic writes a function's arguments model."""
    builder = sch.SchemaBuilder()
    return builder.root(builder.object_schema(_properties(signature), title=f"{fn.__name__}Arguments"))


def output_schema(fn: Callable[..., Any], structured_output: bool | None) -> tuple[str | None, dict[str, Any] | None]:
    """How a tool's return value becomes structured content, and its output schema, by mcp's
    FastMCP rules: TypedDicts, dataclasses and `dict[str, T]` as they are; `None`, primitives,
    lists, unions and other generics wrapped as `{"result": value}`; no annotation, `Any`, a bare
    `dict` and other classes not at all."""
    if structured_output is False:
        return None, None
    hints = sch.resolved_hints(fn)
    what = f"@tool {fn.__name__}"
    if "return" not in hints:
        shape, schema = None, None
    else:
        shape, schema = _output_for(fn.__name__, hints["return"])
    if structured_output and schema is None:
        raise TypeError(f"{what}: structured_output=True needs a return annotation with a JSON Schema")
    return shape, schema


def _output_for(fn_name: str, hint: Any) -> tuple[str | None, dict[str, Any] | None]:
    inner, metadata = sch.strip_annotated(hint)
    if inner is CallToolResult:
        # Answered as it is; `Annotated[CallToolResult, Model]` declares Model's schema, as FastMCP.
        declared = next((m for m in metadata if isinstance(m, type)), None)
        return None, (_output_for(fn_name, declared)[1] if declared is not None else None)
    builder = sch.SchemaBuilder()
    origin = get_origin(inner)
    if origin is dict:
        args = get_args(inner)
        if len(args) == 2 and args[0] is str:
            values = builder.schema(args[1])
            return OUTPUT_OBJECT, builder.root({"additionalProperties": values or True,
                                                "title": f"{fn_name}DictOutput", "type": "object"})
    elif isinstance(inner, type) and origin is None:
        if sch.is_model(inner):
            body = builder.object_schema(_root_output_properties(inner), title=inner.__name__)
            return OUTPUT_OBJECT, builder.root(body)
        if inner not in (str, int, float, bool, bytes, type(None)):
            return None, None
    result = sch.Property("result", hint, True)
    body = builder.object_schema([result], title=f"{fn_name}Output")
    return OUTPUT_WRAPPED, builder.root(body)


def _root_output_properties(model: type) -> list[sch.Property]:
    """The properties of a model returned as a whole, as FastMCP copies it into a pydantic model:
    without descriptions or titles, a TypedDict's optional keys defaulting to None, a dataclass
    field required unless it has a plain default."""
    props = []
    for prop in sch.model_properties(model):
        if sch.is_typeddict(model) and not prop.required:
            props.append(sch.Property(prop.name, prop.hint, False, None))
        elif prop.default is sch.NOTHING:
            props.append(sch.Property(prop.name, prop.hint, True))
        else:
            props.append(sch.Property(prop.name, prop.hint, False, prop.default))
    return props


def request_schema(signature: Signature) -> dict[str, Any]:
    """An extension method's request schema as the reference SDK puts it on the card: untitled,
    `{"type", "properties", "required"}`, each property its type (an optional one its non-null
    type), description and default."""
    builder = sch.SchemaBuilder()
    properties: dict[str, Any] = {}
    for prop in _properties(signature):
        hint = prop.hint
        if sch.is_union(hint):
            non_null = [a for a in get_args(hint) if a is not type(None)]
            if len(non_null) == 1:
                hint = non_null[0]
        entry = _untitled(builder.schema(hint))
        if prop.description is not None:
            entry["description"] = prop.description
        if prop.default is not sch.NOTHING:
            entry["default"] = prop.default
        properties[prop.name] = entry
    out: dict[str, Any] = {"type": "object", "properties": properties}
    required = [p.name for p in signature.params if p.required]
    if required:
        out["required"] = required
    if builder.defs:
        out["$defs"] = {name: _untitled(d) for name, d in builder.defs.items()}
    return out


def _untitled(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _untitled(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


def _members(cls: type) -> list[tuple[str, Any]]:
    """The class's functions, base classes' first, each in definition order; overrides replace."""
    seen: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if inspect.isfunction(value):
                seen.pop(name, None)
                seen[name] = value
    return list(seen.items())


def describe(cls: type) -> Description:
    """Reads an environment class: its tools and extensions (each in method-name order, as the
    reference SDK discovers them; an extension's methods grouped under its URI where its first
    method comes), data-plane handlers and card name.

    Raises TypeError for what cannot be served: a parameter without a type hint, a type without
    a JSON Schema, two handlers for one data-plane operation or one extension method, or a URI
    mixing handlers with and without `op`.
    """
    tools: list[ToolDescription] = []
    extensions: list[ExtensionDescription] = []
    data_handlers: dict[str, str] = {}
    for attr, fn in sorted(_members(cls)):
        if (options := getattr(fn, _TOOL, None)) is not None:
            tools.append(_describe_tool(attr, fn, options))
        if (ext := getattr(fn, _EXTENSION, None)) is not None:
            _add_extension_method(extensions, attr, fn, ext)
        if (operation := getattr(fn, _DATA, None)) is not None:
            if operation in data_handlers:
                raise TypeError(f"{cls.__name__}: two data/{operation} handlers, "
                                f"{data_handlers[operation]} and {attr}")
            data_handlers[operation] = attr
    tools.sort(key=lambda t: t.method)
    names = [t.name for t in tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TypeError(f"{cls.__name__}: duplicate tool names {duplicates}")
    return Description(
        name=getattr(cls, _CARD_NAME, None) or cls.__name__,
        tools=tools,
        extensions=extensions,
        operations=[op for op in ("reset", "add", "get") if op in data_handlers],
        tool_access=bool(getattr(cls, "tool_access", False)),
        data_handlers=data_handlers,
        exports="get" in data_handlers
        and "write_namespace" in inspect.signature(getattr(cls, data_handlers["get"])).parameters,
    )


def _describe_tool(attr: str, fn: Callable[..., Any], options: ToolOptions) -> ToolDescription:
    what = f"@tool {attr}"
    signature = _signature(fn, what)
    try:
        schema = input_schema(fn, signature)
        shape, out_schema = output_schema(fn, options.structured_output)
    except sch.SchemaError as e:
        raise TypeError(f"{what}: {e}") from None
    description = options.description
    if description is None and fn.__doc__:
        description = inspect.cleandoc(fn.__doc__)
    return ToolDescription(
        name=options.name or attr, description=description, input_schema=schema, output_schema=out_schema,
        annotations=options.annotations, meta=options.meta, hidden_by_default=options.hidden_by_default,
        method=attr, signature=signature, output_shape=shape,
    )


def _add_extension_method(extensions: list[ExtensionDescription], attr: str, fn: Callable[..., Any],
                          options: ExtensionOptions) -> None:
    what = f"@extension {attr}"
    signature = _signature(fn, what)
    try:
        schema = request_schema(signature)
    except sch.SchemaError as e:
        raise TypeError(f"{what}: {e}") from None
    method = ExtensionMethodDescription(options.op or attr, options.method, schema, options.path, attr, signature)
    existing = next((e for e in extensions if e.uri == options.uri), None)
    if existing is None:
        extensions.append(ExtensionDescription(options.uri, options.description, options.op is not None, [method]))
        return
    if not existing.per_method or options.op is None:
        raise TypeError(f"{what}: {options.uri} has several handlers, so each needs an `op`")
    if any(m.op == method.op for m in existing.methods):
        raise TypeError(f"{what}: {options.uri} already has a method {method.op!r}")
    if existing.description is None:
        existing.description = options.description
    existing.methods.append(method)


# ---------------------------------------------------------------------------------- serving

@dataclass
class ImageContent:
    """An image a tool returns (alone or in a list): one image content block."""

    data: bytes
    mime_type: str


@dataclass
class ToolOutcome:
    """A tool's answer as plain values: content blocks (text or images), the structured content
    (a JSON object, or None), and whether it is an error answered verbatim."""

    content: list[str | ImageContent | dict[str, Any]]
    """Text, an image, or an MCP content block as its JSON object (from a verbatim result)."""
    structured_content: dict[str, Any] | None
    is_error: bool = False
    meta: dict[str, Any] | None = None


def jsonable(value: Any) -> Any:
    """A return value as JSON-ready data: dataclasses as dicts, tuples and sets as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return value


def _block(value: Any) -> str | ImageContent:
    if isinstance(value, (str, ImageContent)):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def content_blocks(value: Any) -> list[str | ImageContent]:
    """The content blocks of a return value, as the reference SDK makes them: none for None,
    one text block for a string, one block per element for a list, otherwise one block of
    2-space-indented JSON."""
    if value is None:
        return []
    if isinstance(value, list):
        return [_block(v) for v in value]
    return [_block(value)]


def run_sync(value: Any) -> Any:
    """The value of a handler's return: a coroutine (an `async def` handler) is run to its end.
    It may await other coroutines, but not real I/O, which a component has none of."""
    if not inspect.iscoroutine(value):
        return value
    try:
        value.send(None)
    except StopIteration as done:
        return done.value
    value.close()
    raise RuntimeError("an async handler awaited I/O; a component environment has no event loop to wait on")


def _bind(signature: Signature, arguments: dict[str, Any], context: ToolContext | None) -> dict[str, Any]:
    kwargs = {p.name: arguments[p.name] for p in signature.params if p.name in arguments}
    missing = [p.name for p in signature.params if p.required and p.name not in arguments]
    if missing:
        raise AgentEnvError("invalid_params", f"missing required arguments: {', '.join(missing)}")
    if signature.context_param is not None:
        kwargs[signature.context_param] = context if context is not None else ToolContext.current()
    return kwargs


class Runtime:
    """One environment instance and its description: what the component's exports call."""

    def __init__(self, cls: type) -> None:
        self.instance = cls()
        self.description = serving.apply(describe(cls), self.instance)
        self._tools = {t.name: t for t in self.description.tools}
        self._methods = {(e.uri, m.op): m for e in self.description.extensions for m in e.methods}

    def _data(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        handler = self.description.data_handlers.get(operation)
        if handler is None:
            raise AgentEnvError("not_served", f"data/{operation} is not served")
        try:
            return run_sync(getattr(self.instance, handler)(*args, **kwargs))
        except AgentEnvError:
            raise
        except TransferError as e:
            raise AgentEnvError(e.code, str(e), retryable=e.retryable) from e
        except Exception as e:
            raise AgentEnvError(f"{operation}_failed", str(e)) from e

    def reset(self) -> None:
        """`data/reset`."""
        self._data("reset")

    def add_data(self, parts: list[Part]) -> None:
        """`data/add`."""
        self._data("add", parts)

    def get_data(self) -> list[Part]:
        """`data/get`: the handler's list of parts; a handler taking `write_namespace` is given the
        caller's grant, or None."""
        if self.description.exports:
            return list(self._data("get", write_namespace=transfers.grant()))
        return list(self._data("get"))

    def call_mcp(self, method: str, params: dict[str, Any]) -> Any:
        """Answers MCP request `method` through the `@mcp_requests` handler; `method_not_found`
        without one."""
        handler = self.description.data_handlers.get("mcp")
        if handler is None:
            raise AgentEnvError("method_not_found", f"{method} is not served")
        return run_sync(getattr(self.instance, handler)(method, params))

    def call_tool(self, name: str, arguments: dict[str, Any], context: ToolContext | None = None) -> ToolOutcome:
        """Calls the tool declared as `name`. An `AgentEnvError` propagates (the host answers it
        as a coded error); any other exception is answered as the reference SDK answers it, an
        error result `Error executing tool <name>: <exception>`."""
        spec = self._tools.get(name)
        if spec is None:
            raise AgentEnvError("not_found", f"no tool named {name!r}")
        context = context if context is not None else ToolContext.current()
        kwargs = _bind(spec.signature, arguments, context)
        try:
            hook = serving._hook(self.instance, "on_tool_call")
            answer = run_sync(hook(context)) if hook is not None else None
            if answer is not None and not isinstance(answer, CallToolResult):
                raise TypeError(f"on_tool_call must return None or CallToolResult, got {type(answer).__name__}")
            value = answer if answer is not None else run_sync(getattr(self.instance, spec.method)(**kwargs))
            if isinstance(value, CallToolResult):
                return ToolOutcome([block.to_json() for block in value.content], value.structuredContent,
                                   is_error=value.isError, meta=value.meta)
            value = jsonable(value)
        except AgentEnvError:
            raise
        except Exception as e:
            return ToolOutcome([f"Error executing tool {context.tool or name}: {e}"], None, is_error=True)
        structured = None
        if spec.output_shape == OUTPUT_WRAPPED:
            structured = {"result": value}
        elif spec.output_shape == OUTPUT_OBJECT:
            structured = value
        return ToolOutcome(content_blocks(value), structured)

    def call_extension(self, uri: str, op: str, request: dict[str, Any], context: ToolContext | None = None) -> Any:
        """Calls method `op` of extension `uri`; answers its JSON value (`{}` for None). A value
        of the wrong type is `invalid_params` (400); an exception other than `AgentEnvError` is
        `extension_failed` (500, applied unknown), as on the reference SDK."""
        method = self._methods.get((uri, op))
        if method is None:
            raise AgentEnvError("not_found", f"no extension method {uri} {op}", status=404)
        for param in method.signature.params:
            if param.name in request and not sch.check(request[param.name], param.hint):
                raise AgentEnvError("invalid_params",
                                    f"{param.name} must be {sch.describe_type(param.hint)}")
        kwargs = _bind(method.signature, request, context)
        try:
            value = jsonable(run_sync(getattr(self.instance, method.handler)(**kwargs)))
        except AgentEnvError:
            raise
        except Exception as e:
            raise AgentEnvError("extension_failed", str(e), applied="unknown", status=500) from e
        return {} if value is None else value
