import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { AgentFailure, ModelError, ToolCallError, defineAgent, model, session, tools } from "../agent.js";
import { WitError, host, resetHost } from "./agent-mocks.js";

const SCOPE = { session: "s1", parentSession: null, branchHints: [] };
const PROMPT = { text: "hi", images: [] };

/** Runs one turn of `turn` (a function*): `{ok}` the WIT completion or `{err}` the WIT failure. */
function run(turn) {
  try {
    return { ok: defineAgent(turn).invoke(SCOPE, PROMPT) };
  } catch (err) {
    return { err };
  }
}

beforeEach(resetHost);

test("non-terminal events are emitted as WIT progress; unknown types are extensions", () => {
  const ended = run(function* () {
    yield { type: "text", delta: "Hel" };
    yield { type: "thinking", delta: "hmm" };
    yield { type: "tool_started", id: "t1", name: "search", args: { q: "x" } };
    yield { type: "tool_progress", id: "t1", text: "half way" };
    yield { type: "tool_ended", id: "t1", isError: false, content: [{ type: "text", text: "found" }] };
    yield { type: "retrying", attempt: 1, maxAttempts: 3, delayMs: 500, reason: "overloaded" };
    yield { type: "citation", url: "https://example.com", n: 1 };
  });
  assert.deepEqual(ended, { ok: { data: null } });
  assert.deepEqual(host.emitted, [
    { tag: "text", val: "Hel" },
    { tag: "thinking", val: "hmm" },
    { tag: "tool-started", val: { id: "t1", name: "search", args: '{"q":"x"}' } },
    { tag: "tool-progress", val: { id: "t1", text: "half way" } },
    { tag: "tool-ended", val: { id: "t1", isError: false, content: '[{"type":"text","text":"found"}]' } },
    { tag: "retrying", val: { attempt: 1, maxAttempts: 3, delayMs: 500, reason: "overloaded" } },
    { tag: "extension", val: { name: "citation", body: '{"url":"https://example.com","n":1}' } },
  ]);
});

test("the turn function receives the scope, the prompt and the brokers", () => {
  let seen;
  run(function* (scope, prompt, cx) {
    seen = { scope, prompt, cx };
  });
  assert.equal(seen.scope, SCOPE);
  assert.equal(seen.prompt, PROMPT);
  assert.deepEqual(Object.keys(seen.cx), ["model", "tools", "session"]);
  assert.equal(seen.cx.model, model);
  assert.equal(seen.cx.tools, tools);
  assert.equal(seen.cx.session, session);
});

test("the first yielded completed ends the turn, its data as JSON, and closes the generator", () => {
  let after = false;
  let closed = false;
  const ended = run(function* () {
    try {
      yield { type: "text", delta: "done" };
      yield { type: "completed", data: { answer: 42 } };
      after = true;
      yield { type: "text", delta: "never" };
    } finally {
      closed = true;
    }
  });
  assert.deepEqual(ended, { ok: { data: '{"answer":42}' } });
  assert.deepEqual(host.emitted, [{ tag: "text", val: "done" }]);
  assert.equal(after, false);
  assert.equal(closed, true);
});

test("returning {data}, a terminal event or nothing completes the turn", () => {
  assert.deepEqual(run(function* () { return { data: [1, "two"] }; }), { ok: { data: '[1,"two"]' } });
  assert.deepEqual(run(function* () { return { type: "completed" }; }), { ok: { data: null } });
  assert.deepEqual(run(function* () { return { data: null }; }), { ok: { data: null } });
  assert.deepEqual(run(function* () {}), { ok: { data: null } });
  assert.deepEqual(run(() => []), { ok: { data: null } });
});

test("a yielded or returned failed is the WIT failure", () => {
  const yielded = run(function* () {
    yield { type: "failed", details: "no luck", retryable: true, code: "unlucky" };
    yield { type: "completed" };
  });
  assert.deepEqual(yielded, { err: { details: "no luck", retryable: true, code: "unlucky" } });
  assert.deepEqual(run(function* () { return { type: "failed", details: "bare" }; }), {
    err: { details: "bare", retryable: false, code: null },
  });
  assert.deepEqual(host.emitted, []);
});

test("a thrown AgentFailure is that failure; any other error is agent_error", () => {
  assert.deepEqual(run(function* () { throw new AgentFailure("over budget", true, "budget_exceeded"); }), {
    err: { details: "over budget", retryable: true, code: "budget_exceeded" },
  });
  const thrown = run(function* () {
    yield { type: "text", delta: "a" };
    throw new RangeError("out of range");
  });
  assert.deepEqual(thrown, { err: { details: "RangeError: out of range", retryable: false, code: "agent_error" } });
  assert.deepEqual(run(() => { throw "a string"; }), { err: { details: "a string", retryable: false, code: "agent_error" } });
});

test("a malformed event fails the turn with what is wrong, and closes the generator", () => {
  let closed = false;
  const ended = run(function* () {
    try {
      yield { type: "text", delta: 5 };
    } finally {
      closed = true;
    }
  });
  assert.deepEqual(ended, { err: { details: "TypeError: text.delta is a string, not 5", retryable: false, code: "agent_error" } });
  assert.equal(closed, true);
  const cases = [
    ["a string", "an agent yields event objects ({type, ...}), not \"a string\""],
    [{ delta: "x" }, "an event's type is a non-empty string, not undefined"],
    [{ type: "tool_started", id: "t", name: "n" }, "tool_started.args is not JSON: undefined"],
    [{ type: "tool_ended", id: "t", isError: "no", content: [] }, 'tool_ended.isError is a boolean, not "no"'],
    [{ type: "retrying", attempt: -1, maxAttempts: 1, delayMs: 0, reason: "" }, "retrying.attempt is an integer from 0 to 4294967295, not -1"],
    [{ type: "custom", big: 1n }, "the body of a custom event is not JSON: Do not know how to serialize a BigInt"],
  ];
  for (const [event, message] of cases) {
    assert.deepEqual(run(function* () { yield event; }).err, { details: `TypeError: ${message}`, retryable: false, code: "agent_error" });
  }
  assert.deepEqual(run(function* () { return "done"; }).err.details, 'TypeError: an agent\'s turn returns nothing, {data} or a terminal event, not "done"');
  assert.deepEqual(run(function* () { return { type: "text", delta: "x" }; }).err.code, "agent_error");
  assert.deepEqual(host.emitted, []);
});

test("async turn functions are refused when defined, and async iterables when run", () => {
  assert.throws(() => defineAgent(async function* () {}), /synchronous generator/);
  assert.throws(() => defineAgent(async () => {}), /synchronous generator/);
  assert.throws(() => defineAgent("invoke"), /takes the turn's function/);
  const asyncIterable = run(() => ({ [Symbol.asyncIterator]() {} }));
  assert.match(asyncIterable.err.details, /^TypeError: an agent's turn is a synchronous generator/);
  assert.match(run(() => Promise.resolve()).err.details, /synchronous generator/);
  assert.match(run(() => 42).err.details, /answers an iterable of events \(write it as a function\*\), not 42/);
});

test("model.complete sends the request as WIT and answers the chunks as objects", () => {
  host.answers.push([
    { tag: "thinking", val: "Let me see." },
    { tag: "text", val: "Calling." },
    { tag: "tool-call", val: { id: "c1", name: "slack_send_message", args: '{"text":"hi"}' } },
  ]);
  const chunks = [
    ...model.complete({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "assistant", content: "", toolCalls: [{ id: "c0", name: "list", args: { all: true } }] },
        { role: "tool", content: "[]", toolCallId: "c0" },
      ],
      tools: [{ name: "list", description: "Lists.", inputSchema: { type: "object" } }],
      maxTokens: 100,
    }),
  ];
  assert.deepEqual(chunks, [
    { type: "thinking", delta: "Let me see." },
    { type: "text", delta: "Calling." },
    { type: "tool_call", id: "c1", name: "slack_send_message", args: '{"text":"hi"}' },
  ]);
  assert.deepEqual(host.requests, [
    {
      messages: [
        { role: "system", content: "Be brief.", toolCalls: [], toolCallId: null },
        { role: "assistant", content: "", toolCalls: [{ id: "c0", name: "list", args: '{"all":true}' }], toolCallId: null },
        { role: "tool", content: "[]", toolCalls: [], toolCallId: "c0" },
      ],
      tools: [{ name: "list", description: "Lists.", inputSchema: '{"type":"object"}' }],
      maxTokens: 100,
      temperature: null,
    },
  ]);
  assert.equal(host.responses[0].disposed, true);
});

test("a reader that stops early releases the response", () => {
  host.answers.push([{ tag: "text", val: "a" }, { tag: "text", val: "b" }]);
  for (const chunk of model.complete({ messages: [] })) {
    assert.equal(chunk.delta, "a");
    break;
  }
  assert.equal(host.responses[0].disposed, true);
});

test("model errors are ModelErrors, and end an uncaught turn as the standard loop does", () => {
  host.answers.push(new WitError({ tag: "rate-limited", val: 2000 }));
  assert.throws(() => model.complete({ messages: [] }), (e) => {
    assert.ok(e instanceof ModelError && e instanceof AgentFailure);
    assert.equal(e.kind, "rate-limited");
    assert.equal(e.retryAfterMs, 2000);
    assert.equal(e.details, "the model is rate limited; try again in 2000 ms");
    return true;
  });
  const cases = [
    [{ tag: "rate-limited", val: 2000 }, { details: "the model is rate limited; try again in 2000 ms", retryable: true, code: "rate_limited" }],
    [{ tag: "unavailable", val: "HTTP 503" }, { details: "the model is unavailable: HTTP 503", retryable: true, code: "model_unavailable" }],
    [{ tag: "invalid-request", val: "HTTP 400" }, { details: "the model refused the request: HTTP 400", retryable: false, code: "model_refused" }],
  ];
  for (const [payload, failure] of cases) {
    host.answers.push([{ tag: "text", val: "partial" }, new WitError(payload)]);
    const ended = run(function* (_scope, _prompt, cx) {
      for (const chunk of cx.model.complete({ messages: [] })) yield chunk;
    });
    assert.deepEqual(ended, { err: failure });
  }
  assert.ok(host.responses.every((r) => r.disposed));
});

test("a message of an unknown role is refused before it reaches the host", () => {
  assert.throws(() => model.complete({ messages: [{ role: "bot", content: "x" }] }), /role is "system", "user", "assistant" or "tool", not "bot"/);
  assert.throws(() => model.complete({ messages: [{ role: "user", content: 1 }] }), /the content of a user message is a string, not 1/);
  assert.deepEqual(host.requests, []);
});

test("tools.list parses the schemas; tools.call sends JSON text and parses the content", () => {
  host.tools = [{ name: "slack_send_message", description: "Sends.", inputSchema: '{"type":"object","required":["text"]}' }];
  assert.deepEqual(tools.list(), [{ name: "slack_send_message", description: "Sends.", inputSchema: { type: "object", required: ["text"] } }]);
  host.toolAnswer = { isError: true, content: '[{"type":"text","text":"no such channel"}]' };
  assert.deepEqual(tools.call("c1", "slack_send_message", { channel: "x" }), { isError: true, content: [{ type: "text", text: "no such channel" }] });
  tools.call("c2", "slack_send_message", '{"channel": "general"}');
  tools.call("c3", "slack_list_channels");
  assert.deepEqual(host.calls, [
    ["c1", "slack_send_message", '{"channel":"x"}'],
    ["c2", "slack_send_message", '{"channel": "general"}'],
    ["c3", "slack_list_channels", "{}"],
  ]);
});

test("a tool call the host cannot make throws a ToolCallError", () => {
  host.toolAnswer = new WitError("unknown tool: nope");
  assert.throws(() => tools.call("c1", "nope", {}), (e) => e instanceof ToolCallError && e.message === "unknown tool: nope");
  assert.throws(() => tools.call(1, "nope", {}), /a tool call's id is a string, not 1/);
});

test("the session's history comes as objects and messages are appended as WIT", () => {
  host.history = [{ role: "assistant", content: "", toolCalls: [{ id: "c", name: "n", args: "{}" }], toolCallId: null }];
  assert.deepEqual(session.history(), [{ role: "assistant", content: "", toolCalls: [{ id: "c", name: "n", args: "{}" }], toolCallId: null }]);
  session.append([{ role: "user", content: "hi" }, { role: "tool", content: "ok", toolCallId: "c" }]);
  assert.deepEqual(host.appended, [
    { role: "user", content: "hi", toolCalls: [], toolCallId: null },
    { role: "tool", content: "ok", toolCalls: [], toolCallId: "c" },
  ]);
});
