"""JSON Schemas from type hints, shaped as pydantic v2 writes them (the reference SDK's tools/list).

Pure Python, with no dependency: the component cannot load pydantic-core (a native extension),
so this module derives the same schemas for the types an environment's tools and extensions use:
`str`, `int`, `float`, `bool`, `None`, `Any`, `list[T]`, `tuple[T, ...]`, `dict[str, T]`,
`Optional[T]` / `T | None`, other unions, `Literal[...]`, `TypedDict` classes, dataclasses, and
`Annotated[T, Field(description=...)]`. Keys are sorted as pydantic sorts them (everything but the
members of `properties`), so a ported tool lists byte for byte what the reference lists.
"""
from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints

JsonObject = dict[str, Any]

NOTHING: Any = object()
"""The absence of a default (None is a default)."""


class Field:
    """The `pydantic.Field` of an `Annotated` parameter: `Annotated[str, Field(description=...)]`.

    Only what a tool schema carries is kept: a description, a title and a default.
    """

    def __init__(self, default: Any = NOTHING, *, description: str | None = None, title: str | None = None) -> None:
        self.default = default
        self.description = description
        self.title = title

    @property
    def has_default(self) -> bool:
        """Whether a default was given."""
        return self.default is not NOTHING


class SchemaError(TypeError):
    """A type hint this module cannot describe as JSON Schema."""


_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def is_union(hint: Any) -> bool:
    """Whether a hint is `Union[...]`, `Optional[...]` or `A | B`."""
    return get_origin(hint) in (Union, types.UnionType)


def strip_annotated(hint: Any) -> tuple[Any, list[Any]]:
    """`Annotated[T, m...]` → (T, [m...]); `Required`/`NotRequired` are dropped too."""
    metadata: list[Any] = []
    while True:
        origin = get_origin(hint)
        if origin is typing.Annotated:
            metadata.extend(hint.__metadata__)
            hint = hint.__origin__
        elif origin in (Required, NotRequired):
            hint = get_args(hint)[0]
        else:
            return hint, metadata


def is_typeddict(hint: Any) -> bool:
    """Whether a hint is a TypedDict class, of `typing` or of `typing_extensions`."""
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__")


def is_model(hint: Any) -> bool:
    """TypedDicts and dataclasses: the types pydantic lists under `$defs` and refers to."""
    return isinstance(hint, type) and (is_typeddict(hint) or dataclasses.is_dataclass(hint))


def title_of(name: str) -> str:
    """pydantic's default title of a field: `max_count` → `Max Count`."""
    return name.title().replace("_", " ")


@dataclasses.dataclass
class Property:
    """One property of an object schema: a parameter, or a key of a TypedDict or dataclass."""

    name: str
    hint: Any
    required: bool
    default: Any = NOTHING
    description: str | None = None
    title: str | None = None


class SchemaBuilder:
    """Builds schemas that share one `$defs` table, as pydantic does for one model."""

    def __init__(self) -> None:
        self.defs: dict[str, JsonObject] = {}

    # ------------------------------------------------------------------ types

    def schema(self, hint: Any) -> JsonObject:
        """The schema of a type hint; models go to `$defs` and are referred to."""
        hint, _ = strip_annotated(hint)
        if hint is Any or hint is typing.Any:
            return {}
        if hint in _PRIMITIVES:
            return {"type": _PRIMITIVES[hint]}
        if is_union(hint):
            return {"anyOf": [self.schema(arg) for arg in get_args(hint)]}
        origin = get_origin(hint)
        if origin is Literal:
            return _literal_schema(get_args(hint))
        if origin in (list, set, frozenset) or hint in (list, set, frozenset):
            args = get_args(hint)
            out: JsonObject = {"items": self.schema(args[0]) if args else {}, "type": "array"}
            if origin in (set, frozenset) or hint in (set, frozenset):
                out["uniqueItems"] = True
            return out
        if origin is tuple:
            args = get_args(hint)
            if len(args) == 2 and args[1] is Ellipsis:
                return {"items": self.schema(args[0]), "type": "array"}
            return {"maxItems": len(args), "minItems": len(args),
                    "prefixItems": [self.schema(a) for a in args], "type": "array"}
        if origin is dict or hint is dict:
            args = get_args(hint)
            values = self.schema(args[1]) if args else {}
            return {"additionalProperties": values if args and values else True, "type": "object"}
        if is_model(hint):
            return self._model_ref(hint)
        raise SchemaError(f"no JSON Schema for the type {hint!r}")

    def _model_ref(self, model: type) -> JsonObject:
        name = model.__name__
        if name not in self.defs:
            self.defs[name] = {}  # reserved first, so a recursive model refers to itself
            self.defs[name] = self.object_schema(model_properties(model), title=name,
                                                 description=model_description(model))
        return {"$ref": f"#/$defs/{name}"}

    # ------------------------------------------------------------------ objects

    def property_schema(self, prop: Property) -> JsonObject:
        """A property's schema with its title, description and default."""
        out = dict(self.schema(prop.hint))
        if prop.description is not None:
            out["description"] = prop.description
        if prop.default is not NOTHING:
            out["default"] = prop.default
        if _title_is_set(prop.hint):
            out["title"] = prop.title or title_of(prop.name)
        return out

    def object_schema(self, props: list[Property], *, title: str | None,
                      description: str | None = None) -> JsonObject:
        """An object schema of `props`, with `required` when any is required."""
        out: JsonObject = {"properties": {p.name: self.property_schema(p) for p in props}}
        required = [p.name for p in props if p.required]
        if required:
            out["required"] = required
        if title is not None:
            out["title"] = title
        if description:
            out["description"] = description
        out["type"] = "object"
        return out

    def root(self, schema: JsonObject) -> JsonObject:
        """`schema` as a document: the `$defs` added, keys sorted as pydantic sorts them."""
        if self.defs:
            schema = {**schema, "$defs": self.defs}
        return sort_keys(schema)


def _literal_schema(values: tuple[Any, ...]) -> JsonObject:
    kinds = {type(v) for v in values}
    out: JsonObject = {"const": values[0]} if len(values) == 1 else {"enum": list(values)}
    if len(kinds) == 1 and (kind := next(iter(kinds))) in _PRIMITIVES:
        out["type"] = _PRIMITIVES[kind]
    return out


def _title_is_set(hint: Any) -> bool:
    """pydantic titles a field unless its type (under `Optional`) is a model it refers to."""
    hint, _ = strip_annotated(hint)
    if is_model(hint):
        return False
    if is_union(hint):
        args = [a for a in get_args(hint) if a is not type(None)]
        return not (len(args) == 1 and is_model(strip_annotated(args[0])[0]))
    return True


def model_description(model: type) -> str | None:
    doc = model.__doc__
    if not doc or (dataclasses.is_dataclass(model) and doc.startswith(f"{model.__name__}(")):
        return None  # a dataclass's generated signature is not a description
    return inspect.cleandoc(doc)


def field_of(metadata: list[Any]) -> Field | None:
    """The last `Field` among `Annotated` metadata."""
    fields = [m for m in metadata if isinstance(m, Field)]
    return fields[-1] if fields else None


def model_properties(model: type) -> list[Property]:
    """The properties of a TypedDict or a dataclass, in declaration order."""
    hints = get_type_hints(model, include_extras=True)
    props: list[Property] = []
    if is_typeddict(model):
        for name, hint in hints.items():
            inner, metadata = strip_annotated(hint)
            field = field_of(metadata)
            props.append(Property(name, inner, _typeddict_key_required(model, hint),
                                  description=field.description if field else None,
                                  title=field.title if field else None))
        return props
    for f in dataclasses.fields(model):
        inner, metadata = strip_annotated(hints[f.name])
        field = field_of(metadata)
        default = f.default if f.default is not dataclasses.MISSING else NOTHING
        props.append(Property(f.name, inner, default is NOTHING and f.default_factory is dataclasses.MISSING,
                              default=default, description=field.description if field else None,
                              title=field.title if field else None))
    return props


def _typeddict_key_required(model: type, hint: Any) -> bool:
    """`Required[...]` and `NotRequired[...]` decide, else the class's totality (read from the
    evaluated hint: with string annotations `__required_keys__` misses the qualifiers)."""
    while get_origin(hint) is typing.Annotated:
        hint = hint.__origin__
    if get_origin(hint) is Required:
        return True
    if get_origin(hint) is NotRequired:
        return False
    return bool(getattr(model, "__total__", True))


def sort_keys(value: Any, parent_key: str | None = None) -> Any:
    """Sorts object keys recursively, except the members of `properties` and `default` values
    (pydantic's `GenerateJsonSchema.sort`)."""
    if isinstance(value, dict):
        keys = list(value) if parent_key in ("properties", "default") else sorted(value)
        return {k: value[k] if k == "default" else sort_keys(value[k], k) for k in keys}
    if isinstance(value, list):
        return [sort_keys(v, parent_key) for v in value]
    return value


def check(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a type hint (for extension requests, which the host checks for
    required and unknown keys only). Models are checked one level deep, as dicts."""
    hint, _ = strip_annotated(hint)
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if is_union(hint):
        return any(check(value, arg) for arg in get_args(hint))
    origin = get_origin(hint)
    if origin is Literal:
        return value in get_args(hint)
    if origin in (list, set, frozenset, tuple) or hint in (list, set, frozenset, tuple):
        return isinstance(value, list)
    return isinstance(value, dict)


def describe_type(hint: Any) -> str:
    """A short name of a type hint, for error messages."""
    hint, _ = strip_annotated(hint)
    if hint in _PRIMITIVES:
        return {str: "a string", int: "an integer", float: "a number", bool: "a boolean",
                type(None): "null"}[hint]
    if is_union(hint):
        return " or ".join(describe_type(a) for a in get_args(hint))
    return getattr(hint, "__name__", None) or str(hint)


def resolved_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """A function's type hints with `Annotated` kept; string annotations resolved."""
    return get_type_hints(fn, include_extras=True)
