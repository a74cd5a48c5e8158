"""envhost_sdk on CPython: its schemas against what pydantic and mcp's FastMCP (the reference SDK's
stack) derive from the same signatures, and its runtime's answers (results, errors, context).

Run with the integration suite's venv (it has pydantic and mcp): `python -m pytest sdk-guest/python/tests`.
"""

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import pytest
from mcp.server.fastmcp.utilities.func_metadata import func_metadata
from pydantic import Field as PydanticField
from typing_extensions import NotRequired, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envhost_sdk import (  # noqa: E402
    AgentEnvEnvironment, AgentEnvError, Caller, DataPart, Field, ToolContext, add_data, environment_card, extension,
    TextPart, get_data, mcp_requests, reset_data, tool,
)
from envhost_sdk.environment import Runtime, describe, input_schema, output_schema, _signature  # noqa: E402


class Channel(TypedDict):
    name: str
    topic: str


class Documented(TypedDict):
    """A documented shape."""
    max_count: int
    extra: NotRequired[float]
    kind: Literal["a", "b"]
    channels: list[Channel]
    counts: dict[str, int]
    anything: Any


@dataclass
class Point:
    x: int
    y: float = 0.0


Message = TypedDict("Message", {"from": Optional[str], "to": Optional[Channel]})


# Each signature twice: with pydantic's Field (for FastMCP) and with envhost_sdk's (for the SDK).
def _signatures(field: Any) -> list[Any]:
    def plain(a: str, b: int, c: float, d: bool, e_f: list[str]) -> str: ...
    def defaults(a: str = "x", b: Optional[int] = 3, c: list[int] | None = None, d: float = 1.5) -> int: ...
    def described(channel: Annotated[str, field(description="The channel.")],
                  to: Annotated[Optional[str], field(description="Who.")] = None) -> list[Channel]: ...
    def literals(kind: Literal["x", "y"], one: Literal[1] = 1) -> Optional[Documented]: ...
    def models(channel: Channel, doc: Optional[Documented] = None, point: Point | None = None) -> Documented: ...
    def mappings(counts: dict[str, int], nested: dict[str, list[Channel]]) -> dict[str, int]: ...
    def tuples(pair: tuple[int, str], many: tuple[str, ...]) -> tuple[int, str]: ...
    def unions(v: int | str, w: Union_ = None) -> Message: ...
    def nothing() -> None: ...
    def untyped_result(a: Any): ...
    def a_point() -> Point: ...
    def bare_dict() -> dict: ...
    return [plain, defaults, described, literals, models, mappings, tuples, unions, nothing, untyped_result,
            a_point, bare_dict]


Union_ = Optional[list[Point]]

PAIRS = list(zip(_signatures(PydanticField), _signatures(Field)))


@pytest.mark.parametrize("theirs, ours", PAIRS, ids=[fn.__name__ for fn, _ in PAIRS])
def test_input_schemas_are_pydantics_byte_for_byte(theirs, ours):
    expected = func_metadata(theirs).arg_model.model_json_schema()
    got = input_schema(ours, _signature(ours, "test"))
    assert json.dumps(got) == json.dumps(expected)


@pytest.mark.parametrize("theirs, ours", PAIRS, ids=[fn.__name__ for fn, _ in PAIRS])
def test_output_schemas_are_fastmcps_byte_for_byte(theirs, ours):
    expected = func_metadata(theirs, structured_output=None)
    shape, got = output_schema(ours, None)
    assert json.dumps(got) == json.dumps(expected.output_schema)
    assert (shape == "wrapped") == bool(expected.wrap_output)


def test_structured_output_false_lists_no_schema_and_true_requires_one():
    def f() -> int: ...
    def g(): ...
    assert output_schema(f, False) == (None, None)
    with pytest.raises(TypeError, match="structured_output=True"):
        output_schema(g, True)


# ------------------------------------------------------------------------------- the runtime

@environment_card(name="demo")
class Demo(AgentEnvEnvironment):
    tool_access = True

    def __init__(self) -> None:
        self.items: list[str] = []

    @reset_data
    def reset(self) -> None:
        self.items = []

    @add_data
    async def add(self, parts: list) -> None:
        for part in parts:
            if not isinstance(part.data.get("items"), list):
                raise ValueError("items must be a list")
            self.items.extend(part.data["items"])

    @get_data
    def get(self) -> list:
        return [DataPart({"items": self.items})]

    @tool(name="{environment_name}_push", annotations={"idempotentHint": False}, meta={"k": 1})
    async def push(self, ctx: ToolContext, item: Annotated[str, Field(description="The item.")]) -> list[str]:
        """Push an item."""
        if item == "bad":
            raise AgentEnvError("bad_item", "not that one", hint="another", applied="no")
        if item == "boom":
            raise RuntimeError("exploded")
        self.items.append(f"{ctx.caller.role}:{item}")
        return self.items

    @tool(hidden_by_default=True)
    def count(self) -> Point:
        return Point(len(self.items))

    @extension("urn:example:demo/v1", op="peek", method="get", description="Demo.")
    def peek(self, index: int) -> str:
        return self.items[index]

    @extension("urn:example:demo/v1", op="noop")
    def noop(self) -> None:
        return None


def test_describe_reads_the_class():
    d = describe(Demo)
    assert d.name == "demo" and d.tool_access and d.operations == ["reset", "add", "get"]
    assert [t.name for t in d.tools] == ["count", "{environment_name}_push"]  # sorted by method name
    push = d.tools[1]
    assert push.description == "Push an item." and push.meta == {"k": 1} and not push.hidden_by_default
    assert list(push.input_schema["properties"]) == ["item"]  # the context is no parameter
    assert d.tools[0].hidden_by_default and d.tools[0].output_schema["title"] == "Point"
    [ext] = d.extensions
    # in method-name order, as the reference discovers them
    assert ext.per_method and [(m.op, m.http_method) for m in ext.methods] == [("noop", "POST"), ("peek", "GET")]
    assert ext.methods[1].request_schema == {"type": "object", "properties": {"index": {"type": "integer"}},
                                             "required": ["index"]}


def test_tool_results_errors_and_context():
    runtime = Runtime(Demo)
    ctx = ToolContext(caller=Caller(role="alice"), tool="demo_push", arguments={}, call_id="0" * 32)
    ok = runtime.call_tool("{environment_name}_push", {"item": "x"}, ctx)
    assert (ok.content, ok.structured_content, ok.is_error) == (["alice:x"], {"result": ["alice:x"]}, False)
    assert runtime.call_tool("count", {}).structured_content == {"x": 1, "y": 0.0}
    with pytest.raises(AgentEnvError) as coded:
        runtime.call_tool("{environment_name}_push", {"item": "bad"}, ctx)
    assert (coded.value.code, coded.value.hint) == ("bad_item", "another")
    crashed = runtime.call_tool("{environment_name}_push", {"item": "boom"}, ctx)
    assert crashed.is_error and crashed.content == ["Error executing tool demo_push: exploded"]


def test_data_plane_and_extensions():
    runtime = Runtime(Demo)
    runtime.add_data([DataPart({"items": ["a", "b"]})])
    with pytest.raises(AgentEnvError) as failed:
        runtime.add_data([DataPart({"items": 1})])
    assert (failed.value.code, failed.value.message) == ("add_failed", "items must be a list")
    assert runtime.get_data() == [DataPart({"items": ["a", "b"]})]
    assert runtime.call_extension("urn:example:demo/v1", "peek", {"index": 1}) == "b"
    assert runtime.call_extension("urn:example:demo/v1", "noop", {}) == {}
    with pytest.raises(AgentEnvError) as wrong_type:
        runtime.call_extension("urn:example:demo/v1", "peek", {"index": "1"})
    assert (wrong_type.value.code, wrong_type.value.status) == ("invalid_params", 400)
    with pytest.raises(AgentEnvError) as crashed:
        runtime.call_extension("urn:example:demo/v1", "peek", {"index": 9})
    assert (crashed.value.code, crashed.value.status, crashed.value.applied) == ("extension_failed", 500, "unknown")
    runtime.reset()
    assert runtime.get_data() == [DataPart({"items": []})]


def test_mcp_requests_go_to_the_marked_handler_and_are_not_served_without_one():
    class Library(AgentEnvEnvironment):
        @mcp_requests
        def mcp(self, method: str, params: dict) -> dict:
            if method == "resources/read" and params["uri"] == "test://a":
                return {"contents": [{"uri": "test://a", "text": "a"}]}
            raise AgentEnvError("resource_not_found", f"no {params.get('uri')}")

    runtime = Runtime(Library)
    assert runtime.description.operations == []
    assert runtime.call_mcp("resources/read", {"uri": "test://a"})["contents"][0]["text"] == "a"
    with pytest.raises(AgentEnvError, match="no test://b") as missing:
        runtime.call_mcp("resources/read", {"uri": "test://b"})
    assert missing.value.code == "resource_not_found"
    with pytest.raises(AgentEnvError) as unserved:
        Runtime(Demo).call_mcp("prompts/list", {})
    assert unserved.value.code == "method_not_found"


def test_what_cannot_be_served_is_refused_when_the_class_is_read():
    class Untyped(AgentEnvEnvironment):
        @tool
        def f(self, x) -> int: ...

    class TwoResets(AgentEnvEnvironment):
        @reset_data
        def a(self) -> None: ...

        @reset_data
        def b(self) -> None: ...

    with pytest.raises(TypeError, match="needs a type hint"):
        describe(Untyped)
    with pytest.raises(TypeError, match="two data/reset handlers"):
        describe(TwoResets)
    with pytest.raises(TypeError, match="only `name`"):
        environment_card(name="x", description="y")
    with pytest.raises(ValueError, match="applied"):
        AgentEnvError("c", "m", applied="maybe")  # type: ignore[arg-type]


def test_a_get_data_taking_write_namespace_exports_and_gets_none_without_a_grant():
    from envhost_sdk.transfers import DATA_OBJECTS_EXTENSION_URI, uploaded_file_part

    class Exporting:
        @get_data
        async def export(self, write_namespace=None) -> list:
            return [TextPart(text=f"grant {write_namespace}")]

    class Plain:
        @get_data
        def get(self) -> list:
            return []

    assert describe(Exporting).exports and not describe(Plain).exports
    assert Runtime(Exporting).get_data() == [TextPart(text="grant None")]
    part = uploaded_file_part("a/b.zip", name="b.zip", mime_type="application/zip")
    assert part.file.uri == "a/b.zip" and part.metadata == {DATA_OBJECTS_EXTENSION_URI: {"path": "a/b.zip"}}
    with pytest.raises(ValueError):
        uploaded_file_part("../b.zip")


def test_a_call_tool_result_is_answered_verbatim_with_no_output_schema():
    from envhost_sdk.types import AudioContent, CallToolResult, ImageContent, TextContent

    class Verbatim:
        @tool
        def show(self) -> CallToolResult:
            return CallToolResult(content=[TextContent(type="text", text="hi"),
                                           ImageContent(type="image", data="AAAA", mimeType="image/png"),
                                           AudioContent(type="audio", data="BBBB", mimeType="audio/wav")],
                                  structuredContent={"n": 1}, isError=True, meta={"k": "v"})

    spec = describe(Verbatim).tools[0]
    assert spec.output_schema is None
    outcome = Runtime(Verbatim).call_tool("show", {})
    assert outcome.content == [{"type": "text", "text": "hi"},
                               {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                               {"type": "audio", "data": "BBBB", "mimeType": "audio/wav"}]
    assert (outcome.structured_content, outcome.is_error, outcome.meta) == ({"n": 1}, True, {"k": "v"})


def test_the_mount_hooks_choose_what_is_served_as_the_references_do():
    from envhost_sdk import EnvironmentExtension
    from envhost_sdk.types import CallToolResult, TextContent

    @environment_card(name="hooked")
    class Hooked(AgentEnvEnvironment):
        @tool(name="{environment_name}_a")
        def a(self) -> str:
            return "a"

        @tool(name="{environment_name}_b")
        def b(self) -> str:
            return "b"

        @extension("urn:example:stats/v1", op="count")
        def count(self) -> int:
            return 1

        @extension("urn:example:stats/v1", op="reset")
        def reset_stats(self) -> int:
            return 0

        @extension("urn:example:gone/v1")
        def gone(self) -> int:
            return 0

        @reset_data
        def reset(self) -> None:
            pass

        @get_data
        def get(self) -> list:
            return []

        def served_tools(self, tools):
            return [t.model_copy(update={"description": "B!"}) for t in reversed(tools) if t.name != "hooked_a"] + \
                [t for t in tools if t.name == "hooked_a"]

        def served_extensions(self, extensions):
            kept = [e for e in extensions if e.uri == "urn:example:stats/v1"]
            return [e.model_copy(update={"params": {**e.params, "methods": {"count": e.params["methods"]["count"]}}})
                    for e in kept]

        def served_operations(self, operations):
            return [o for o in operations if o != "data/reset"]

        def extension_params(self, uri):
            return {"limit": 5}

        def declared_extensions(self):
            return [EnvironmentExtension(uri="urn:agentenv:intake/v1", params={"add": []})]

        def on_tool_call(self, context):
            if context.caller.role == "guest":
                return CallToolResult(content=[TextContent(type="text", text="refused")], isError=True)
            return None

    runtime = Runtime(Hooked)
    d = runtime.description
    assert [(t.name, t.description) for t in d.tools] == [("{environment_name}_b", "B!"), ("{environment_name}_a", None)]
    assert [(e.uri, [m.op for m in e.methods]) for e in d.extensions] == [
        ("urn:example:stats/v1", ["count"]), ("urn:agentenv:intake/v1", [])]
    assert d.extension_params == {"urn:example:stats/v1": {"limit": 5}}
    assert d.declared_params == {"urn:agentenv:intake/v1": ({"add": []}, None)}
    assert d.operations == ["get"]
    refused = runtime.call_tool("{environment_name}_a", {}, ToolContext(caller=Caller(role="guest")))
    assert (refused.content, refused.is_error) == ([{"type": "text", "text": "refused"}], True)
    assert runtime.call_tool("{environment_name}_a", {}, ToolContext(caller=Caller(role="alice"))).content == ["a"]


def test_a_file_part_has_the_references_base64_bytes_and_the_raw_content():
    from envhost_sdk.types import FilePart, FileWithBytes

    raw = FileWithBytes(content=b'{"a": 1}', mimeType="application/json", name="a.json")
    assert raw.bytes == "eyJhIjogMX0=" and raw.content == b'{"a": 1}'
    encoded = FileWithBytes(bytes="eyJhIjogMX0=", mimeType="application/json", name="a.json")
    assert encoded == raw and encoded.content == b'{"a": 1}'
    assert FilePart(file=encoded).file.mimeType == "application/json"
    with pytest.raises(TypeError, match="content="):
        FileWithBytes(bytes=b"raw")
    with pytest.raises(TypeError):
        FileWithBytes()
    with pytest.raises(ValueError):
        FileWithBytes(bytes="not base64!").content
