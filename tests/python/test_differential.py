"""Differential tests: the same requests to `envhost serve slack.wasm` and to the reference slack
environment (tests/reference-ports/slack/reference.py on the Python SDK), answers normalised and
compared.

The suite is a table of cases. A case is a list of steps run in order against a freshly reset
server (no data, no tool-access rules); each step sends one request and answers a normalised,
comparable value. `test_same_answers` runs every case against both servers and compares the two
lists of answers. To extend the suite, add a case to a table.

Normalisation keeps what the protocol makes contract and drops what it leaves free:
- SDK routes (card, /agentenv, extensions, /tools/*): the parsed JSON with its key order;
- -32602 data-plane errors: code and message only (the detail text is free, difference b);
- -32700 and -32600: without envhost's data.detail (a listed difference);
- -32000 transfer errors whose text each host words its own way (a JSON decoder's message, an
  unsupported scheme, an unreachable URL): compared up to a prefix given in the case;
- the card: as it is (tools' schemas included, the reference's simplified ones);
- tools/list: as it is (schemas included, byte for byte as JSON);
- tools/call: content, structuredContent, isError;
- HTTP: status, content type, Allow (as a set, HEAD dropped), body.

Known, accepted differences are asserted explicitly as differences at the end of this file, and
so are the differences this suite found beyond them.
"""
from __future__ import annotations

import base64
import json
from urllib.parse import urljoin
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from conftest import (
    CARD_PATH, MCP_ACCEPT, ROLE_META, SESSION_META, STATS_PATH, UNSET, FileServer, McpSession, Server, data_part,
    mcp_messages, reset_state, rpc, rpc_post, sse_events, state,
)

SEND, INBOX, CHANNELS, PURGE = "slack_send_message", "slack_list_inbox", "slack_list_channels", "slack_admin_purge"


# ==================================================================== the machinery

@dataclass
class Context:
    """What a step may use: the server under test, a place for file:// parts it can read, the local
    HTTP file server, and the MCP sessions of the case (one per role, opened on first use)."""
    server: Server
    data_root: Path
    files: FileServer
    sessions: dict = field(default_factory=dict)

    def session(self, role: str | None) -> McpSession:
        if role not in self.sessions:
            self.sessions[role] = McpSession(self.server, role=role)
        return self.sessions[role]

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()


Step = Callable[[Context], Any]


@dataclass(frozen=True)
class Case:
    id: str
    steps: tuple[Step, ...]


def case(id: str, *steps: Step) -> Case:
    return Case(id, steps)


def run_case(server: Server, case_: Case, data_root: Path, files: FileServer) -> list:
    reset_state(server)
    ctx = Context(server, data_root, files)
    try:
        return [step(ctx) for step in case_.steps]
    finally:
        ctx.close()


def assert_same(case_: Case, envhost_answers: list, reference_answers: list) -> None:
    """The one comparison: the answers, step by step."""
    assert len(envhost_answers) == len(reference_answers)
    for index, (ours, theirs) in enumerate(zip(envhost_answers, reference_answers)):
        assert ours == theirs, f"{case_.id}: step {index} differs (left: envhost, right: reference)"


def ordered(value: Any) -> str:
    """JSON text that keeps key order, for order-sensitive comparison with readable diffs."""
    return json.dumps(value, indent=1, ensure_ascii=False)


# ---------------------------------------------------------------- normalisers

def normalise_rpc_reply(reply: dict, message_prefix: str | None = None) -> str:
    error = reply.get("error")
    if isinstance(error, dict) and error.get("code") in (-32700, -32600):
        # envhost's data.detail says where or what (docs/protocol.md's differences); the
        # reference sends none.
        error = {key: value for key, value in error.items() if key != "data"}
        reply = {**reply, "error": error}
    if isinstance(error, dict) and error.get("code") == -32602:
        detail = (error.get("data") or {}).get("detail")
        # (b) the detail text is free: keep only that there is one.
        error = {**error, "data": {"detail": "<text>" if isinstance(detail, str) and detail else detail}}
        reply = {**reply, "error": error}
    if isinstance(error, dict) and message_prefix is not None and str(error.get("message")).startswith(message_prefix):
        reply = {**reply, "error": {**error, "message": f"{message_prefix}..."}}
    return ordered(reply)


def normalise_card(card: dict) -> str:
    return ordered(card)


def normalise_call_result(result: dict) -> dict:
    out = {"content": result.get("content"), "isError": result.get("isError")}
    if "structuredContent" in result:
        out["structuredContent"] = result["structuredContent"]
    return out


def normalise_http(response: httpx.Response, base_url: str) -> dict:
    content_type = response.headers.get("content-type")
    body: Any = response.text
    if content_type == "application/json" and response.content:
        body = ordered(response.json())
    out = {"status": response.status_code, "content-type": content_type, "body": body}
    if "allow" in response.headers:
        # Compared as a set of verbs. HEAD is dropped: the reference lists it on GET routes,
        # envhost serves it there but does not list it (reported).
        out["allow"] = sorted({v.strip() for v in response.headers["allow"].split(",")} - {"HEAD", ""})
    if "location" in response.headers:
        # Compared as the URL a client follows: envhost's is relative ("../mcp"), so that it
        # holds wherever an episode is mounted.
        target = urljoin(str(response.request.url), response.headers["location"])
        out["location"] = target.removeprefix(base_url)
    return out


# ---------------------------------------------------------------- steps

def rpc_step(method: Any, params: Any = UNSET, id: Any = 1, message_prefix: str | None = None) -> Step:
    """A data-plane request; -32000 messages starting with `message_prefix` are compared by it."""
    def step(ctx: Context) -> str:
        return normalise_rpc_reply(rpc(ctx.server, method, params, id), message_prefix)
    return step


def raw_rpc(body: bytes, content_type: str | None = None) -> Step:
    def step(ctx: Context) -> str:
        if content_type is None:
            response = rpc_post(ctx.server, body)
        else:
            response = httpx.post(ctx.server.url("/agentenv"), content=body, headers={"content-type": content_type})
        assert response.status_code == 200, response.text
        return normalise_rpc_reply(response.json())
    return step


def add(*parts: object, message_prefix: str | None = None) -> Step:
    return rpc_step("data/add", {"parts": list(parts)}, message_prefix=message_prefix)


def get() -> Step:
    return rpc_step("data/get", {})


def add_file_in_root(name: str, content: bytes) -> Step:
    """data/add of a file:// part naming a file under the envhost data root (readable by both)."""
    def step(ctx: Context) -> str:
        path = ctx.data_root / name
        path.write_bytes(content)
        return normalise_rpc_reply(rpc(ctx.server, "data/add", {"parts": [
            {"kind": "file", "file": {"uri": path.as_uri(), "mimeType": "application/json", "name": name}}]}))
    return step


def add_http_file(name: str, content: bytes | None, message_prefix: str | None = None) -> Step:
    """data/add of an http:// part served by the local file server (None: a 404)."""
    def step(ctx: Context) -> str:
        url = ctx.files.put(name, content) if content is not None else f"{ctx.files.base_url}/{name}"
        reply = rpc(ctx.server, "data/add", {"parts": [{"kind": "file", "file": {"uri": url}}]})
        return normalise_rpc_reply(reply, message_prefix)
    return step


def http(verb: str, path: str, body: bytes | None = None, json_body: Any = UNSET, headers: dict | None = None) -> Step:
    def step(ctx: Context) -> dict:
        kwargs: dict[str, Any] = {"headers": headers or {}}
        if json_body is not UNSET:
            kwargs["json"] = json_body
        elif body is not None:
            kwargs["content"] = body
            kwargs["headers"] = {"content-type": "application/json", **kwargs["headers"]}
        response = httpx.request(verb, ctx.server.url(path), timeout=30, **kwargs)
        return normalise_http(response, ctx.server.base_url)
    return step


def access(verb: str, body: Any) -> Step:
    return http("POST", f"/tools/{verb}", json_body=body)


def card() -> Step:
    def step(ctx: Context) -> str:
        response = httpx.get(ctx.server.url(CARD_PATH))
        assert response.status_code == 200 and response.headers["content-type"] == "application/json"
        return normalise_card(response.json())
    return step


def tools(role: str | None = None, meta: dict | None = None, cursor: str | None = None) -> Step:
    def step(ctx: Context) -> list:
        params: dict[str, Any] = {"_meta": meta} if meta is not None else {}
        if cursor is not None:
            params["cursor"] = cursor
        return ctx.session(role).result("tools/list", params)["tools"]
    return step


def call(name: str, arguments: dict | None = None, role: str | None = None, meta: dict | None = None) -> Step:
    def step(ctx: Context) -> dict:
        return normalise_call_result(ctx.session(role).call(name, arguments, meta=meta))
    return step


def initialize(version: str, headers: dict | None = None) -> Step:
    """A fresh session's initialize: the status, the negotiated version, the server name, whether
    tools are advertised."""
    def step(ctx: Context) -> dict:
        response = httpx.post(ctx.server.mcp_url, headers={"Accept": MCP_ACCEPT, **(headers or {})}, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        result = mcp_messages(response)[0]["result"]
        return {"status": response.status_code, "session": bool(response.headers.get("mcp-session-id")),
                "protocolVersion": result["protocolVersion"], "name": result["serverInfo"]["name"],
                "tools": "tools" in result["capabilities"]}
    return step


def mcp_stream(accept: str = "text/event-stream", with_session: bool = True) -> Step:
    """GET /mcp (the standalone SSE stream): status and content type, without reading the stream."""
    def step(ctx: Context) -> dict:
        headers = {"Accept": accept}
        if with_session:
            headers["mcp-session-id"] = ctx.session(None).session_id
        with httpx.stream("GET", ctx.server.mcp_url, headers=headers, timeout=10) as response:
            content_type = response.headers.get("content-type", "").split(";")[0]
            return {"status": response.status_code,
                    "content-type": content_type if response.status_code == 200 else None}
    return step


def mcp(method: str, params: dict | None = None, role: str | None = None) -> Step:
    """Any MCP request; the whole reply minus its id."""
    def step(ctx: Context) -> dict:
        reply = ctx.session(role).request(method, params)
        return {k: v for k, v in reply.items() if k != "id"}
    return step


# ==================================================================== the tables

GENERAL = {"name": "general", "topic": "chit-chat"}
SEED = data_part(channels=[GENERAL, {"name": "random"}],
                 messages=[{"channel": "general", "text": "hi", "from": "alice", "to": "bob"},
                           {"channel": "random", "text": "yo", "to": "carol"}])


def b64(value: Any) -> str:
    return base64.b64encode(value if isinstance(value, bytes) else json.dumps(value).encode()).decode()


CARD_CASES = [
    case("card", card()),
]

DATA_PLANE_CASES = [
    case("reset-then-get", rpc_step("data/reset", {}), get()),
    case("reset-ignores-params", rpc_step("data/reset", "anything"), rpc_step("data/reset")),
    case("seed-then-get", add(SEED), get()),
    case("add-is-additive", add(SEED), add(data_part(messages=[{"channel": "general", "text": "again"}])), get()),
    case("channel-upsert", add(data_part(channels=[{"name": "a", "topic": "one"}, {"name": "b"}])),
         add(data_part(channels=[{"name": "a", "topic": "two"}, {"name": "b", "topic": None}])), get()),
    case("message-to-channel-of-same-request", add(data_part(channels=[{"name": "new"}]),
                                                   data_part(messages=[{"channel": "new", "text": "x"}])), get()),
    case("message-before-its-channel-fails", add(data_part(messages=[{"channel": "later", "text": "x"}]),
                                                  data_part(channels=[{"name": "later"}])), get()),
    case("all-or-nothing", add(SEED, data_part(messages=[{"channel": "nope", "text": "x"}])), get()),
    case("text-part-ignored", add({"kind": "text", "text": "ignored"}, SEED), get()),
    case("extra-message-keys-dropped",
         add(data_part(channels=[{"name": "a", "extra": 1}], messages=[{"channel": "a", "text": "t", "x": 2}])), get()),
    case("empty-data-object", add({"kind": "data", "data": {}}), get()),
    case("extra-params-ignored", rpc_step("data/add", {"parts": [SEED], "extra": True}), get()),
    case("get-ignores-params", add(SEED), rpc_step("data/get", [1]), rpc_step("data/get")),
    case("many-messages", add(data_part(channels=[{"name": f"c{i}"} for i in range(50)],
                                        messages=[{"channel": f"c{i % 50}", "text": f"m{i}", "to": f"r{i % 7}"}
                                                  for i in range(2000)])), get()),
    case("unicode-roundtrip", add(data_part(channels=[{"name": "é✓😀", "topic": "t\"\\/\n\t\u2028"}])), get()),
    # payload errors: -32000 add_failed with the env's message
    case("channels-not-a-list", add(data_part(channels={"a": 1})), get()),  # type: ignore[arg-type]
    case("messages-not-a-list", add({"kind": "data", "data": {"messages": "x"}})),
    case("channel-without-name", add(data_part(channels=[{"topic": "x"}]))),
    case("channel-empty-name", add(data_part(channels=[{"name": ""}]))),
    case("channel-not-an-object", add(data_part(channels=["general"]))),
    case("topic-not-a-string", add(data_part(channels=[{"name": "a", "topic": 5}]))),
    case("message-unknown-channel", add(data_part(messages=[{"channel": "zz", "text": "t"}]))),
    case("message-without-text", add(data_part(channels=[{"name": "a"}], messages=[{"channel": "a"}]))),
    case("message-from-not-a-string",
         add(data_part(channels=[{"name": "a"}], messages=[{"channel": "a", "text": "t", "from": 5}]))),
    case("message-to-not-a-string",
         add(data_part(channels=[{"name": "a"}], messages=[{"channel": "a", "text": "t", "to": ["x"]}]))),
    # file parts
    case("file-inline-bytes", add({"kind": "file", "file": {"bytes": b64(SEED["data"]), "name": "s.json"}}), get()),
    case("file-inline-bytes-not-base64", add({"kind": "file", "file": {"bytes": "!!not base64!!"}})),
    case("file-inline-bytes-not-json", add({"kind": "file", "file": {"bytes": b64(b"not json")}},
                                           message_prefix="the file part is not JSON: ")),
    case("file-inline-bytes-empty", add({"kind": "file", "file": {"bytes": ""}}, message_prefix="the file part is not JSON: ")),
    case("file-bytes-win-over-uri", add({"kind": "file", "file": {"bytes": b64(SEED["data"]), "uri": "ftp://x/y"}}), get()),
    case("file-inline-bytes-json-array", add({"kind": "file", "file": {"bytes": b64([1, 2])}})),
    case("file-uri-under-data-root", add_file_in_root("diff-seed.json", json.dumps(SEED["data"]).encode()), get()),
    case("file-uri-http", add_http_file("diff-seed.json", json.dumps(SEED["data"]).encode()), get()),
    case("file-uri-http-not-json", add_http_file("diff-bad.json", b"<html>", message_prefix="the file part is not JSON: ")),
    case("file-uri-http-404", add_http_file("diff-missing.json", None, message_prefix="")),
    case("file-uri-unsupported-scheme", add({"kind": "file", "file": {"uri": "ftp://example.com/x.json"}},
                                            message_prefix="unsupported file uri ")),
    case("file-mixed-with-data", add(data_part(channels=[{"name": "x"}]),
                                     {"kind": "file", "file": {"bytes": b64({"messages": [{"channel": "x", "text": "y"}]})}}),
         get()),
    # -32602 (detail compared as "some text")
    case("add-empty-parts", rpc_step("data/add", {"parts": []})),
    case("add-no-parts", rpc_step("data/add", {})),
    case("add-null-params", rpc_step("data/add", None)),
    case("add-params-not-object", rpc_step("data/add", [1])),
    case("add-parts-not-list", rpc_step("data/add", {"parts": "x"})),
    case("add-unknown-kind", add({"kind": "nope"})),
    case("add-missing-kind", add({"data": {}})),
    case("add-data-not-object", add({"kind": "data", "data": [1]})),
    case("add-text-without-text", add({"kind": "text"})),
    case("add-file-without-content", add({"kind": "file", "file": {}})),
    case("add-bad-metadata", add({"kind": "data", "data": {}, "metadata": 5})),
    case("add-part-as-array", add(["text", "hi", None])),
    case("add-file-as-array", add({"kind": "file", "file": [b64(SEED["data"]), None, None]})),
    # the envelope (protocol.md#envelope)
    case("parse-error", raw_rpc(b"{nope")),
    case("empty-body", raw_rpc(b"")),
    case("array-body", raw_rpc(b"[1]")),
    case("string-body", raw_rpc(b'"x"')),
    case("wrong-jsonrpc", raw_rpc(b'{"jsonrpc": "1.0", "id": 4, "method": "data/get"}')),
    case("missing-method", raw_rpc(b'{"jsonrpc": "2.0", "id": 4}')),
    case("unknown-method", raw_rpc(b'{"jsonrpc": "2.0", "id": "q", "method": "data/nope"}')),
    case("numeric-method", raw_rpc(b'{"jsonrpc": "2.0", "id": 4, "method": 5}')),
    case("notification", raw_rpc(b'{"jsonrpc": "2.0", "method": "data/reset"}')),
    case("any-content-type", raw_rpc(b'{"jsonrpc": "2.0", "id": 1, "method": "data/get"}', content_type="text/plain"),
         raw_rpc(b'{"jsonrpc": "2.0", "id": 2, "method": "data/reset"}', content_type="application/x-www-form-urlencoded")),
    case("ids-echoed", rpc_step("data/reset", {}, id="s"), rpc_step("data/reset", {}, id=2.5),
         rpc_step("data/reset", {}, id={"a": [1]}), rpc_step("data/reset", {}, id=None), rpc_step("data/reset", {}, id=True)),
]

TOOL_CASES = [
    case("tools-list-default", tools()),
    case("tools-list-role", tools("someone")),
    case("send-message", add(SEED), call(SEND, {"channel": "general", "text": "x"}), get()),
    case("send-message-to-role", add(SEED), call(SEND, {"channel": "general", "text": "x", "to": "bob"}, role="alice"),
         get()),
    case("send-message-to-null", add(SEED), call(SEND, {"channel": "general", "text": "x", "to": None}), get()),
    case("send-message-unknown-channel", call(SEND, {"channel": "nope", "text": "x"}), get()),
    case("send-message-role-default-is-none", add(SEED), call(SEND, {"channel": "general", "text": "x"}, role="default"),
         get()),
    case("list-channels-empty", call(CHANNELS)),
    case("list-channels", add(SEED), call(CHANNELS, {})),
    case("list-inbox-per-role", add(SEED), call(INBOX, role="bob"), call(INBOX, role="carol"), call(INBOX, role="alice"),
         call(INBOX)),
    case("list-inbox-after-send", add(SEED), call(SEND, {"channel": "random", "text": "2", "to": "dave"}, role="erin"),
         call(INBOX, role="dave")),
    case("admin-purge-hidden", add(SEED), call(PURGE, {"channel": "general"}), get()),
    case("admin-purge-granted", add(SEED), access("enable", {"role": "ops", "tools": [PURGE]}), tools("ops"),
         call(PURGE, {"channel": "general"}, role="ops"), call(PURGE, {"channel": "general"}, role="ops"), get()),
    case("admin-purge-unknown-channel", access("enable", {"role": "ops", "tools": [PURGE]}),
         call(PURGE, {"channel": "nope"}, role="ops")),
    case("unknown-tool", call("slack_nope")),
    case("unknown-tool-with-role", access("disable", {"role": "*", "tools": "*"}), call("slack_nope", role="x")),
    case("meta-role-wins", add(SEED), call(SEND, {"channel": "general", "text": "m"}, role="hdr", meta={ROLE_META: "grader"}),
         call(SEND, {"channel": "general", "text": "n"}, role="hdr", meta={ROLE_META: "default"}),
         call(SEND, {"channel": "general", "text": "o"}, role="hdr", meta={ROLE_META: None}),
         call(SEND, {"channel": "general", "text": "p"}, role="hdr", meta={SESSION_META: "S"}),
         call(SEND, {"channel": "general", "text": "q"}, role="hdr", meta={ROLE_META: " padded "}), get()),
    case("meta-role-tools-list", access("enable", {"role": "grader", "tools": [PURGE]}),
         tools("agent", meta={ROLE_META: "grader"}), tools("grader", meta={ROLE_META: None})),
    case("call-without-arguments", add(SEED), mcp("tools/call", {"name": CHANNELS})),
    case("call-with-an-undeclared-argument", add(SEED), call(CHANNELS, {"bogus": 1})),
    case("tools-list-with-a-cursor", tools(cursor="abc")),
]

MCP_CASES = [
    case("ping", mcp("ping")),
    case("empty-lists", mcp("resources/list"), mcp("prompts/list"), mcp("resources/templates/list")),
    case("protocol-versions", initialize("2025-11-25"), initialize("2025-06-18"), initialize("2025-03-26"),
         initialize("2024-11-05"), initialize("1999-01-01")),
    case("no-dns-rebinding-protection", initialize("2025-11-25", {"Host": "evil.example", "Origin": "http://evil.example"})),
    case("standalone-stream", mcp_stream(), mcp_stream(accept="application/json")),
]

# protocol.md#worked-example with a = list_channels, b = send_message, h = admin_purge (hidden); list_inbox follows `*`.
VISIBILITY = (tools(), tools("agent"), tools("grader"))

TOOL_ACCESS_CASES = [
    case("worked-sequence-7.5", *VISIBILITY,
         access("disable", {"role": "agent", "tools": [SEND]}), *VISIBILITY,
         access("enable", {"role": "grader", "tools": [PURGE]}), *VISIBILITY,
         access("disable", {"role": "*", "tools": "*"}), *VISIBILITY,
         access("enable", {"role": "agent", "tools": "*"}), *VISIBILITY,
         access("enable", {"role": "*", "tools": [PURGE]}), *VISIBILITY,
         access("disable", {"role": "agent", "tools": [PURGE, CHANNELS]}), *VISIBILITY,
         access("enable", {"role": "*", "tools": "*"}), *VISIBILITY,
         access("disable", {"role": "default", "tools": [CHANNELS]}), *VISIBILITY,
         access("disable", {"role": "*", "tools": [SEND]}), *VISIBILITY),
    case("refusal", add(SEED), access("disable", {"role": "agent", "tools": [SEND]}),
         call(SEND, {"channel": "general", "text": "x"}, role="agent"), get()),
    case("unknown-names-are-stored", access("disable", {"role": "a", "tools": ["zzz", SEND, "aaa"]}),
         access("enable", {"role": "a", "tools": []})),
    case("star-role-name-rule", access("disable", {"role": "r1", "tools": [SEND]}),
         access("enable", {"role": "*", "tools": [SEND]}), tools("r1"), tools("r2")),
    case("role-star-caller", access("disable", {"role": "*", "tools": [CHANNELS]}), tools("*")),
    case("default-role-rules", access("disable", {"role": "default", "tools": [INBOX]}), tools(), tools("default"),
         tools("other")),
    case("role-keys-are-not-trimmed", access("disable", {"role": " agent ", "tools": [SEND]}), tools("agent")),
    case("star-among-names", access("enable", {"role": "r", "tools": ["*", PURGE, "*"]}), tools("r"),
         access("disable", {"role": "r", "tools": []})),
    case("access-not-json", http("POST", "/tools/enable", b"nope")),
    case("access-empty-body", http("POST", "/tools/disable", b"")),
    case("access-array", http("POST", "/tools/enable", b"[1]")),
    case("access-missing-role", access("enable", {"tools": "*"})),
    case("access-empty-role", access("disable", {"role": "", "tools": "*"})),
    case("access-role-not-string", access("enable", {"role": 5, "tools": "*"})),
    case("access-tools-bad-string", access("enable", {"role": "a", "tools": "x"})),
    case("access-tools-not-strings", access("disable", {"role": "a", "tools": [1]})),
    case("access-missing-tools", access("enable", {"role": "a"})),
]

EXTENSION_CASES = [
    case("stats-get", add(SEED), http("GET", f"{STATS_PATH}/get")),
    case("stats-get-empty", http("GET", f"{STATS_PATH}/get")),
    case("stats-get-unexpected-query", http("GET", f"{STATS_PATH}/get?x=1")),
    case("stats-head", http("HEAD", f"{STATS_PATH}/get")),
    case("set-topic", add(SEED), http("POST", f"{STATS_PATH}/set-topic", json_body={"channel": "random", "topic": "T"}),
         get(), http("GET", f"{STATS_PATH}/get")),
    case("set-topic-unicode", add(SEED), http("POST", f"{STATS_PATH}/set-topic", json_body={"channel": "general", "topic": "ü😀"})),
    case("set-topic-role-header", add(SEED),
         http("POST", f"{STATS_PATH}/set-topic", json_body={"channel": "general", "topic": "x"}, headers={"AgentEnv-Role": "r"})),
    case("set-topic-unknown-channel", http("POST", f"{STATS_PATH}/set-topic", json_body={"channel": "zz", "topic": "T"})),
    case("set-topic-missing-arg", add(SEED), http("POST", f"{STATS_PATH}/set-topic", json_body={"channel": "general"})),
    case("set-topic-unexpected-arg", add(SEED),
         http("POST", f"{STATS_PATH}/set-topic", json_body={"channel": "general", "topic": "T", "zzz": 1})),
    case("set-topic-non-object-body", http("POST", f"{STATS_PATH}/set-topic", b"[1]")),
    case("set-topic-string-body", http("POST", f"{STATS_PATH}/set-topic", b'"x"')),
    case("set-topic-empty-body", http("POST", f"{STATS_PATH}/set-topic", b"")),
    case("set-topic-wrong-verb", http("GET", f"{STATS_PATH}/set-topic"), http("PUT", f"{STATS_PATH}/set-topic", b"{}")),
    case("get-wrong-verb", http("POST", f"{STATS_PATH}/get", b"{}")),
    case("unknown-extension-path", http("GET", "/agentenv/ext/nope"), http("POST", f"{STATS_PATH}/nope", b"{}")),
    case("unknown-path", http("GET", "/nope")),
]

HTTP_CASES = [
    case("card-head", http("HEAD", CARD_PATH)),
    # protocol.md#http-surface: a wrong verb on an SDK route is 405 text/plain "Method Not Allowed" with Allow.
    case("sdk-routes-wrong-verb", http("POST", CARD_PATH), http("GET", "/agentenv"), http("OPTIONS", "/agentenv"),
         http("GET", "/tools/enable"), http("GET", "/tools/disable")),
    # protocol.md#http-surface: /mcp/ redirects (307) to /mcp, so a client configured with a trailing slash still works
    # (ToolSession follows redirects).
    case("mcp-trailing-slash", http("GET", "/mcp/", headers={"Accept": "text/event-stream"})),
]

CASES = CARD_CASES + DATA_PLANE_CASES + TOOL_CASES + MCP_CASES + TOOL_ACCESS_CASES + EXTENSION_CASES + HTTP_CASES


@pytest.mark.parametrize("case_", CASES, ids=[c.id for c in CASES])
def test_same_answers(envhost_server, reference_server, data_root, file_server, case_):
    envhost_answers = run_case(envhost_server, case_, data_root, file_server)
    reference_answers = run_case(reference_server, case_, data_root, file_server)
    assert_same(case_, envhost_answers, reference_answers)


# ---------------------------------------------------------------- ENVIRONMENT_NAME=chat

CHAT_CASES = [
    case("chat-card", card()),
    case("chat-tools", tools(), access("enable", {"role": "x", "tools": ["chat_admin_purge"]}), tools("x")),
    case("chat-calls", add(SEED), call("chat_send_message", {"channel": "general", "text": "x"}, role="r"),
         call("chat_list_inbox", role="bob"), call("chat_list_channels"), call(SEND, {"channel": "general", "text": "y"}),
         get()),
    case("chat-refusal", call("chat_admin_purge", {"channel": "general"})),
]


@pytest.mark.parametrize("case_", CHAT_CASES, ids=[c.id for c in CHAT_CASES])
def test_same_answers_renamed(envhost_chat, reference_chat, data_root, file_server, case_):
    envhost_answers = run_case(envhost_chat, case_, data_root, file_server)
    reference_answers = run_case(reference_chat, case_, data_root, file_server)
    assert_same(case_, envhost_answers, reference_answers)


# ---------------------------------------------------------------- byte compatibility of the SDK routes

def _data_get_after_seed(server: Server) -> httpx.Response:
    rpc(server, "data/add", {"parts": [SEED]})
    return rpc_post(server, {"jsonrpc": "2.0", "id": 1, "method": "data/get"})


def _payload_error(server: Server) -> httpx.Response:
    return rpc_post(server, {"jsonrpc": "2.0", "id": 1, "method": "data/add",
                             "params": {"parts": [data_part(messages=[{"channel": "é", "text": ""}])]}})


BYTE_CASES = [
    ("data-get", _data_get_after_seed),
    ("payload-error", _payload_error),
    ("envelope-error", lambda server: rpc_post(server, '{"jsonrpc": "2.0", "id": 3, "method": "data/nopé"}'.encode())),
    ("extension", lambda server: httpx.post(server.url(f"{STATS_PATH}/set-topic"), json={"channel": "ü", "topic": "x"})),
    ("tool-access", lambda server: httpx.post(server.url("/tools/disable"), json={"role": "r", "tools": [SEND, "*"]})),
]


@pytest.mark.parametrize("name, send", BYTE_CASES, ids=[name for name, _ in BYTE_CASES])
def test_sdk_routes_answer_the_same_bytes(envhost, reference, name, send):
    ours, theirs = send(envhost), send(reference)
    assert (ours.status_code, ours.headers.get("content-type")) == (theirs.status_code, theirs.headers.get("content-type"))
    assert ours.content == theirs.content


# ==================================================================== documented differences

def _add_file(server: Server, path: Path) -> dict:
    return rpc(server, "data/add", {"parts": [{"kind": "file", "file": {"uri": path.as_uri()}}]})


def test_difference_a_file_outside_the_data_roots(envhost, reference, outside_root):
    """(a) envhost reads file:// parts only under its data roots; the reference reads any path."""
    path = outside_root / "diff-outside.json"
    path.write_text(json.dumps(SEED["data"]))
    ours, theirs = _add_file(envhost, path), _add_file(reference, path)
    assert theirs == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert state(reference)["channels"][0] == GENERAL
    assert ours["error"]["code"] == -32000 and ours["error"]["data"] == {"code": "add_failed"}
    assert "allowed data roots" in ours["error"]["message"]
    assert state(envhost) == {"channels": [], "messages": []}


@pytest.mark.parametrize("body", [b"{nope", b"", b"[1]", b'{"jsonrpc": "1.0", "id": 4, "method": "data/get"}',
                                  b'{"jsonrpc": "2.0", "id": 4}'],
                         ids=["not-json", "empty", "array", "version", "no-method"])
def test_difference_envelope_errors_say_where_and_what(envhost, reference, body):
    """-32700 and -32600: the same code, message and id; envhost's data.detail says where the
    body stops being JSON or what the request lacks, where the reference sends no data."""
    ours, theirs = rpc_post(envhost, body).json(), rpc_post(reference, body).json()
    assert "data" not in theirs["error"]
    detail = ours["error"].pop("data")["detail"]
    assert ours == theirs
    assert detail and (ours["error"]["code"] == -32600 or "line 1 column" in detail), detail


@pytest.mark.parametrize("params", [{"parts": []}, [1], {"parts": [{"kind": "nope"}]}], ids=["empty", "list", "kind"])
def test_difference_b_minus_32602_detail_texts(envhost, reference, params):
    """(b) -32602: same code and message, free detail text (pydantic's on the reference)."""
    ours, theirs = rpc(envhost, "data/add", params)["error"], rpc(reference, "data/add", params)["error"]
    assert (ours["code"], ours["message"]) == (theirs["code"], theirs["message"]) == (-32602, "invalid_request")
    assert isinstance(ours["data"]["detail"], str) and ours["data"]["detail"]
    assert ours["data"]["detail"] != theirs["data"]["detail"]


@pytest.mark.parametrize("arguments", [{"channel": "general"}, {"channel": 5, "text": "x"}, {"text": "x", "to": 1}],
                         ids=["missing", "wrong-type", "several"])
def test_difference_c_argument_validation_texts(envhost, reference, arguments):
    """(c) argument validation: both isError without structuredContent, text
    'Error executing tool <name>: ' then free text."""
    results = []
    for server in (envhost, reference):
        with McpSession(server) as session:
            results.append(session.call(SEND, arguments))
    for result in results:
        assert result["isError"] is True and "structuredContent" not in result
        assert len(result["content"]) == 1 and result["content"][0]["text"].startswith(f"Error executing tool {SEND}: ")
    assert results[0]["content"][0]["text"] != results[1]["content"][0]["text"]


def _sse_answer(server: Server, method: str, params: dict) -> httpx.Response:
    with McpSession(server) as session:
        return session.post({"jsonrpc": "2.0", "id": 42, "method": method, "params": params})


def test_sse_framing(envhost, reference):
    """Both answer a request with one SSE event named `message`, no id, carrying the reply;
    the bodies are byte-identical."""
    ours, theirs = (_sse_answer(s, "tools/call", {"name": CHANNELS, "arguments": {}}) for s in (envhost, reference))
    for response in (ours, theirs):
        assert response.headers["content-type"].startswith("text/event-stream")
    our_events, their_events = sse_events(ours.text), sse_events(theirs.text)
    for events in (our_events, their_events):
        assert [e.get("event") for e in events] == ["message"] and "id" not in events[0]
    assert ours.content == theirs.content


# ---------------------------------------------------------------- differences found beyond (a)-(d)

def test_found_set_topic_with_a_non_string_topic(envhost, reference):
    """envhost checks the declared `str` type of an extension parameter (400 invalid_params); the
    reference SDK does not coerce or check it and stores the number (200)."""
    for server in (envhost, reference):
        rpc(server, "data/add", {"parts": [SEED]})
    body = {"channel": "general", "topic": 5}
    ours = httpx.post(envhost.url(f"{STATS_PATH}/set-topic"), json=body)
    theirs = httpx.post(reference.url(f"{STATS_PATH}/set-topic"), json=body)
    assert (theirs.status_code, theirs.json()) == (200, {"name": "general", "topic": 5})
    assert ours.status_code == 400 and ours.json()["error"]["code"] == "invalid_params"


def test_found_extension_bad_json_texts(envhost, reference):
    """A body that is not JSON: both 400 invalid_params, each with its own decoder's text."""
    answers = [httpx.post(s.url(f"{STATS_PATH}/set-topic"), content=b"nope") for s in (envhost, reference)]
    errors = [a.json()["error"] for a in answers]
    assert [a.status_code for a in answers] == [400, 400]
    assert [(e["code"], e["applied"]) for e in errors] == [("invalid_params", "no")] * 2
    assert errors[0]["message"] != errors[1]["message"]


def test_found_unknown_mcp_methods(envhost, reference):
    """An unknown MCP method: envhost answers -32601, the reference (mcp quirk) -32602 "Invalid
    request parameters"; protocol.md#methods allows -32601. tools/call without a name: -32602 from both."""
    codes = {}
    for label, server in (("envhost", envhost), ("reference", reference)):
        with McpSession(server) as session:
            codes[label] = [session.request(m, p)["error"]["code"]
                            for m, p in (("nope/x", {}), ("tools/call", {}))]
    assert codes == {"envhost": [-32601, -32602], "reference": [-32602, -32602]}


def test_found_method_not_found_text_of_a_null_method(envhost, reference):
    """-32601 says `method not found: ` + the method as text: JSON text on envhost, Python's
    str() on the reference (null -> "None")."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": null}'
    messages = [rpc_post(s, body).json()["error"] for s in (envhost, reference)]
    assert [m["code"] for m in messages] == [-32601, -32601]
    assert [m["message"] for m in messages] == ["method not found: null", "method not found: None"]


def test_found_transfer_error_texts(envhost, reference):
    """Transfer failures: same code and data.code; the messages are each host's own
    (e.g. an unsupported scheme, an unreachable URL)."""
    parts = [{"kind": "file", "file": {"uri": "ftp://example.com/x.json"}}]
    errors = [rpc(s, "data/add", {"parts": parts})["error"] for s in (envhost, reference)]
    assert [(e["code"], e["data"]) for e in errors] == [(-32000, {"code": "add_failed"})] * 2
    assert errors[0]["message"] == errors[1]["message"] == "unsupported file uri scheme 'ftp': use file://, http:// or https://"


def _mcp_raw(server: Server, content: bytes, content_type: str = "application/json", session: str | None = None):
    headers = {"Accept": MCP_ACCEPT, "content-type": content_type}
    if session:
        headers["mcp-session-id"] = session
    return httpx.post(server.mcp_url, content=content, headers=headers)


def test_mcp_transport_error_statuses(envhost, reference):
    """Malformed MCP POSTs (bad JSON, a wrong content-type, a batch, a message or params that are
    not an object) get 400 from both; the JSON-RPC error codes in the bodies are each SDK's own."""
    statuses = {}
    for label, server in (("envhost", envhost), ("reference", reference)):
        with McpSession(server) as session:
            statuses[label] = [
                _mcp_raw(server, b"{nope").status_code,
                _mcp_raw(server, b"{}", content_type="text/plain").status_code,
                _mcp_raw(server, b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', session=session.session_id).status_code,
                _mcp_raw(server, b'["2.0", 1, "ping"]', session=session.session_id).status_code,
                _mcp_raw(
                    server,
                    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["slack_list_channels", {}]}',
                    session=session.session_id,
                ).status_code,
            ]
    assert statuses == {"envhost": [400] * 5, "reference": [400] * 5}
