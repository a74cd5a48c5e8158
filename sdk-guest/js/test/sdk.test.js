import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AgentEnvError,
  ClientError,
  DefinitionError,
  Environment,
  NamespaceUploader,
  ToolResult,
  client,
  decodeUtf8,
  encodeUtf8,
  progress,
  s,
  uploadedFilePart,
} from "../index.js";
import { records, reports, requests, setCall } from "./wit-mocks.js";
import { objects, setGrant } from "./upload-mocks.js";

const encoder = new TextEncoder();

function call(tool, args, role = "alice") {
  return { caller: { role, session: "s1" }, tool, arguments: JSON.stringify(args), callId: "0".repeat(32) };
}

function counter() {
  let count = 0;
  const env = new Environment({ name: "counter" })
    .tool(
      { name: "{environment_name}_add", description: "Add.", args: { by: s.integer(), note: s.optional(s.nullable(s.string())) }, returns: s.integer() },
      function add({ by, note }, ctx) {
        if (by < 0) throw new AgentEnvError("negative", "by must be positive", { hint: "use a positive number" });
        if (by === 13) throw new RangeError("unlucky");
        count += by;
        return { count, note, role: ctx.caller.role }.count;
      },
    )
    .tool({ name: "{environment_name}_show", annotations: { readOnlyHint: true } }, function show(_args, ctx) {
      return [{ count }, ctx.tool];
    });
  return env.exports();
}

test("describe lists tools by handler name, with titled schemas and output shapes", () => {
  const info = counter().describe();
  assert.deepEqual(info.tools.map((t) => t.name), ["{environment_name}_add", "{environment_name}_show"]);
  const [add, show] = info.tools;
  // pydantic's form, byte for byte: anyOf for a nullable type, titles, keys sorted
  assert.equal(
    add.inputSchema,
    '{"properties":{"by":{"title":"By","type":"integer"},"note":{"anyOf":[{"type":"string"},{"type":"null"}],' +
      '"default":null,"title":"Note"}},"required":["by"],"title":"addArguments","type":"object"}',
  );
  assert.equal(
    add.outputSchema,
    '{"properties":{"result":{"title":"Result","type":"integer"}},"required":["result"],"title":"addOutput","type":"object"}',
  );
  assert.equal(show.outputSchema, null);
  assert.deepEqual(show.annotations, { title: null, readOnlyHint: true, destructiveHint: null, idempotentHint: null, openWorldHint: null });
  assert.deepEqual(info.operations, []);
  assert.equal(info.toolAccess, false);
});

test("a tool gets its defaults and context, and answers wrapped structured content", () => {
  const env = counter();
  setCall(call("counter_add", { by: 2 }));
  assert.deepEqual(env.callTool("{environment_name}_add", '{"by": 2}'), {
    content: [{ tag: "text", val: "2" }], structuredContent: '{"result":2}', isError: false, meta: null,
  });
  setCall(call("counter_show", {}));
  assert.deepEqual(env.callTool("{environment_name}_show", "{}"), {
    content: [{ tag: "text", val: '{\n  "count": 2\n}' }, { tag: "text", val: "counter_show" }],
    structuredContent: null,
    isError: false,
    meta: null,
  });
});

test("errors become WIT env-errors (coded, unknown tool), an unexpected exception the reference's error result", () => {
  const env = counter();
  setCall(call("counter_add", { by: -1 }));
  assert.throws(() => env.callTool("{environment_name}_add", '{"by": -1}'), (e) => {
    assert.deepEqual(e, { code: "negative", message: "by must be positive", retryable: false, applied: "no", hint: "use a positive number", status: 400 });
    return true;
  });
  assert.throws(() => env.callTool("nope", "{}"), (e) => e.code === "unknown_tool" && e.message === "Unknown tool: nope");
  records.length = 0;
  setCall(call("counter_add", { by: 13 }));
  assert.deepEqual(env.callTool("{environment_name}_add", '{"by": 13}'), {
    content: [{ tag: "text", val: "Error executing tool counter_add: unlucky" }], structuredContent: null, isError: true, meta: null,
  });
  assert.equal(records[0][0], "error");
  assert.throws(() => env.reset(), (e) => e.code === "not_served" && e.message === "data/reset is not served");
});

test("the data plane converts parts both ways", () => {
  let loaded;
  const env = new Environment({ name: "d" })
    .onAddData((parts) => {
      loaded = parts;
    })
    .onGetData(() => [{ kind: "data", data: { a: 1 } }, { kind: "file", file: { uri: "/x" }, name: "x.json" }])
    .exports();
  env.addData([
    { tag: "text", val: { text: "t", metadata: null } },
    { tag: "data", val: { data: '{"a":1}', metadata: '{"m":true}' } },
    { tag: "file", val: { file: { tag: "bytes", val: [123, 125] }, mimeType: undefined, name: "f.json", metadata: undefined } },
  ]);
  assert.deepEqual(loaded, [
    { kind: "text", text: "t", metadata: null },
    { kind: "data", data: { a: 1 }, metadata: { m: true } },
    { kind: "file", file: { bytes: new Uint8Array([123, 125]) }, mimeType: null, name: "f.json", metadata: null },
  ]);
  assert.deepEqual(env.getData(), [
    { tag: "data", val: { data: '{"a":1}', metadata: null } },
    { tag: "file", val: { file: { tag: "uri", val: "/x" }, mimeType: null, name: "x.json", metadata: null } },
  ]);
  assert.deepEqual(env.describe().operations, ["add", "get"]);
});

test("extensions merge by uri, check request types and answer {} for nothing", () => {
  const env = new Environment({ name: "e" })
    .extension({ uri: "urn:x:stats/v1", op: "get", method: "get", description: "Stats." }, () => undefined)
    .extension({ uri: "urn:x:stats/v1", op: "set", request: { n: s.integer(), tags: s.optional(s.array(s.string())) } }, ({ n }) => ({ n }))
    .extension({ uri: "urn:x:ping/v1" }, function ping() {
      throw new Error("down");
    })
    .exports();
  const [stats, ping] = env.describe().extensions;
  assert.equal(stats.layout, "per-method");
  assert.deepEqual(stats.methods.map((m) => [m.op, m.httpMethod]), [["get", "GET"], ["set", "POST"]]);
  assert.deepEqual([ping.layout, ping.methods[0].op], ["single", "ping"]);
  assert.equal(env.callExtension("urn:x:stats/v1", "get", "{}"), "{}");
  assert.equal(env.callExtension("urn:x:stats/v1", "set", '{"n": 3}'), '{"n":3}');
  assert.throws(() => env.callExtension("urn:x:stats/v1", "set", '{"n": "3"}'),
    (e) => e.code === "invalid_params" && e.message === 'invalid type: string "3", expected an integer at \'n\'');
  assert.throws(() => env.callExtension("urn:x:stats/v1", "set", '{"n": 1, "tags": ["a", 2]}'),
    (e) => e.message === "invalid type: integer `2`, expected a string at 'tags[1]'");
  assert.throws(() => env.callExtension("urn:x:ping/v1", "ping", "{}"),
    (e) => e.code === "extension_failed" && e.status === 500 && e.applied === "unknown" && e.message === "down");
  assert.throws(() => env.callExtension("urn:x:nope/v1", "get", "{}"), (e) => e.code === "not_found" && e.status === 404);
});

test("extensions and their methods are listed by handler name, declaration-only ones last", () => {
  const env = new Environment({ name: "o" })
    .declareExtension({ uri: "urn:x:intake/v1", params: { add: [] } })
    .extension({ uri: "urn:x:admin/v1", op: "count", method: "GET" }, function count() {
      return {};
    })
    .extension({ uri: "urn:x:admin/v1", op: "close" }, function close() {
      return {};
    })
    .extension({ uri: "urn:x:audit/v1" }, function audit() {
      return {};
    })
    .exports();
  const listed = env.describe().extensions.map((e) => [e.uri, e.methods.map((m) => m.op)]);
  assert.deepEqual(listed, [["urn:x:audit/v1", ["audit"]], ["urn:x:admin/v1", ["close", "count"]], ["urn:x:intake/v1", []]]);
  assert.equal(env.callExtension("urn:x:admin/v1", "count", "{}"), "{}");
});

test("a data-plane handler's unexpected exception answers its message alone, as the reference's str(e)", () => {
  const env = new Environment({ name: "d" })
    .onAddData(() => {
      throw new TypeError("tickets load from data parts only");
    })
    .exports();
  records.length = 0;
  assert.throws(() => env.addData([]), (e) => {
    assert.deepEqual(e, {
      code: "add_failed", message: "tickets load from data parts only", retryable: false, applied: "unknown", hint: null, status: 500,
    });
    return true;
  });
  assert.equal(records[0][0], "error");
});

test("named schemas are listed once under $defs; an object result is its own structured content", () => {
  const Item = s.named("Item", s.object({ id: s.integer() }));
  const env = new Environment({ name: "n" })
    .tool({ name: "items", returns: s.array(Item) }, function items() {
      return [{ id: 1 }];
    })
    .tool({ name: "item", returns: Item }, function item() {
      return { id: 1 };
    })
    .exports();
  const [item, items] = env.describe().tools;
  assert.deepEqual(JSON.parse(items.outputSchema).$defs, {
    Item: { properties: { id: { title: "Id", type: "integer" } }, required: ["id"], title: "Item", type: "object" },
  });
  assert.deepEqual(JSON.parse(item.outputSchema), { properties: { id: { title: "Id", type: "integer" } }, required: ["id"], title: "Item", type: "object" });
  assert.equal(env.callTool("item", "{}").structuredContent, '{"id":1}');
});

test("a ToolResult is sent as it is", () => {
  const audio = { type: "audio", data: "UklGRg==", mimeType: "audio/wav" };
  const env = new Environment({ name: "r" })
    .tool({ name: "pic" }, () => new ToolResult([{ type: "image", data: [1, 2], mimeType: "image/png" }, audio], { isError: true, meta: { k: 1 } }))
    .exports();
  assert.deepEqual(env.callTool("pic", "{}"), {
    content: [{ tag: "image", val: { data: new Uint8Array([1, 2]), mimeType: "image/png" } }, { tag: "block", val: JSON.stringify(audio) }],
    structuredContent: null,
    isError: true,
    meta: '{"k":1}',
  });
});

test("declaration mistakes are refused when made", () => {
  const env = new Environment({ name: "x" }).tool({ name: "a" }, () => 1);
  assert.throws(() => env.tool({ name: "a" }, () => 1), DefinitionError);
  assert.throws(() => env.tool({ name: "{env}_b" }, () => 1), /unknown placeholder \{env\}/);
  assert.throws(() => env.tool({ name: "c", annotations: { readonly: true } }, () => 1), /unknown annotations readonly/);
  assert.throws(() => env.onReset(() => {}).onReset(() => {}), /already has a handler/);
  assert.throws(() => new AgentEnvError("c", "m", { applied: "maybe" }), TypeError);
});

test("decodeUtf8 decodes strictly", () => {
  for (const text of ["", "plain", "é – 日本 🎉"]) assert.equal(decodeUtf8(encoder.encode(text)), text);
  assert.equal(decodeUtf8(encoder.encode("x".repeat(20000))).length, 20000);
  for (const bad of [[0xff], [0xc3], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]]) {
    assert.throws(() => decodeUtf8(new Uint8Array(bad)), TypeError);
  }
});

test("encodeUtf8 encodes as TextEncoder does, and string uploads need no TextEncoder (QuickJS has none)", () => {
  for (const text of ["", "plain", "é – 日本 🎉", "\u007f\u0080\u07ff\u0800\uffff", "lone \ud800 and \udc00", "end \ud83c"]) {
    assert.deepEqual(encodeUtf8(text), encoder.encode(text));
  }
  const env = new Environment({ name: "exporting" })
    .onGetData(
      (grant) => {
        new NamespaceUploader(grant).upload("notes/é.md", "# é 🎉\n");
        return [];
      },
      { writeNamespace: true },
    )
    .exports();
  const { TextEncoder } = globalThis;
  delete globalThis.TextEncoder;
  try {
    setGrant({ maxObjects: 1n, maxObjectBytes: 100n, maxTotalBytes: 100n });
    env.getData();
  } finally {
    globalThis.TextEncoder = TextEncoder;
    setGrant(null);
  }
  assert.deepEqual(objects.get("notes/é.md"), Buffer.from("# é 🎉\n"));
});

test("progress reports and client requests go to the host's imports", () => {
  progress(50, 100);
  progress(1);
  assert.deepEqual(reports.slice(-2), [[50, 100, null], [1, null, null]]);
  assert.deepEqual(client.sample("Capital?", 10), { asked: "sampling/createMessage" });
  assert.deepEqual(requests.at(-1), ["sampling/createMessage", {
    messages: [{ role: "user", content: { type: "text", text: "Capital?" } }], maxTokens: 10,
  }]);
  assert.deepEqual(client.elicit("Who?", { type: "object" }).asked, "elicitation/create");
  assert.throws(() => client.request("roots/list", {}), (e) => {
    assert.ok(e instanceof ClientError);
    assert.equal(e.code, -32601);
    return true;
  });
});

test("MCP requests go to the handler, and are not served without one", () => {
  const env = new Environment({ name: "lib" })
    .mcp((method, params) => {
      if (method === "resources/read") return { contents: [{ uri: params.uri, text: "a" }] };
      throw new AgentEnvError("method_not_found", `${method} is not served`);
    })
    .exports();
  assert.deepEqual(JSON.parse(env.callMcp("resources/read", '{"uri":"test://a"}')), { contents: [{ uri: "test://a", text: "a" }] });
  assert.throws(() => env.callMcp("prompts/list", "{}"), (e) => e.code === "method_not_found");
  const bare = new Environment({ name: "bare" }).exports();
  assert.throws(() => bare.callMcp("resources/list", "{}"), (e) => e.code === "method_not_found");
});

test("a data/get taking writeNamespace declares data-objects, gets the grant and uploads in chunks", () => {
  const env = new Environment({ name: "exporting" })
    .onGetData(
      (grant) => {
        if (grant === null) return [{ kind: "data", data: { inline: true } }];
        new NamespaceUploader(grant).upload("state/a.bin", [new Uint8Array([1, 2]), "xy"]);
        return [uploadedFilePart("state/a.bin", { name: "a.bin", mimeType: "application/octet-stream" })];
      },
      { writeNamespace: true },
    )
    .exports();
  assert.deepEqual(env.describe().extensions.map((e) => e.uri), ["urn:agentenv:data-objects/v1"]);
  setGrant(null);
  assert.equal(env.getData()[0].tag, "data");
  setGrant({ maxObjects: 2n, maxObjectBytes: 10n, maxTotalBytes: 10n });
  const [part] = env.getData();
  assert.deepEqual(part.val.file, { tag: "uri", val: "state/a.bin" });
  assert.deepEqual(JSON.parse(part.val.metadata), { "urn:agentenv:data-objects/v1": { path: "state/a.bin" } });
  assert.deepEqual([...objects.get("state/a.bin")], [1, 2, 120, 121]);
  const refusing = new Environment({ name: "refusing" })
    .onGetData((grant) => [new NamespaceUploader(grant).upload("../x", "y")], { writeNamespace: true })
    .exports();
  assert.throws(() => refusing.getData(), (e) => e.code === "invalid_transfer" && e.message === "The namespace upload path is invalid.");
  setGrant(null);
});

test("onToolCall answers before the tool and served edits what is served", () => {
  const env = new Environment({ name: "gated" })
    .tool({ name: "{environment_name}_open", description: "Open." }, function open() {
      return "open";
    })
    .onToolCall((ctx) => (ctx.caller.role === "guest" ? new ToolResult([{ type: "text", text: "refused" }], { isError: true }) : null))
    .served((info) => ({ ...info, tools: info.tools.map((t) => ({ ...t, description: "Opens the gate." })) }))
    .exports();
  assert.equal(env.describe().tools[0].description, "Opens the gate.");
  setCall({ caller: { role: "guest", session: null }, tool: "gated_open", arguments: "{}", callId: "0".repeat(32) });
  const refused = env.callTool("{environment_name}_open", "{}");
  assert.equal(refused.isError, true);
  setCall({ caller: { role: "alice", session: null }, tool: "gated_open", arguments: "{}", callId: "0".repeat(32) });
  assert.equal(env.callTool("{environment_name}_open", "{}").isError, false);
  setCall(null);
});
