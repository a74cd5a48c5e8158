/**
 * The standard agent loop on the JavaScript SDK, the port of `guests/tool-agent` (Rust). Each
 * turn: the session's history and the prompt go to the model with the bound environment's tools;
 * text and reasoning stream out as events; the tool calls it asks for run on the environment
 * (the host emits `tool_started` / `tool_ended` around each); their answers go back to the
 * model; and so on until it answers without calling a tool, or `MAX_STEPS` model calls have been
 * made. The session keeps every step that finished (the prompt, then each answer with its tools'
 * answers, appended as the turn goes), so a turn that fails part-way leaves the calls it made in
 * the history. A model error ends the turn as the SDK's `ModelError` does: `rate_limited` and
 * `model_unavailable` (retryable), or `model_refused`.
 * @module
 */

import { ToolCallError, defineAgent } from "@envhost/sdk/agent";

/** The most model calls in one turn. */
const MAX_STEPS = 8;

/**
 * One model call: its streamed text and reasoning yielded as events; answers the assistant
 * message.
 */
function* ask(cx, messages, tools) {
  const answer = { role: "assistant", content: "", toolCalls: [] };
  for (const chunk of cx.model.complete({ messages, tools })) {
    if (chunk.type === "tool_call") {
      answer.toolCalls.push({ id: chunk.id, name: chunk.name, args: chunk.args });
    } else {
      yield chunk;
      if (chunk.type === "text") answer.content += chunk.delta;
    }
  }
  return answer;
}

/** Runs a tool call on the environment; answers the tool message that carries its result. */
function run(cx, call) {
  let content;
  try {
    content = JSON.stringify(cx.tools.call(call.id, call.name, call.args).content);
  } catch (error) {
    if (!(error instanceof ToolCallError)) throw error;
    content = error.message;
  }
  return { role: "tool", content, toolCallId: call.id };
}

/** The component's `agentenv:agent/handler` export. */
export const handler = defineAgent(function* invoke(_scope, prompt, cx) {
  const tools = cx.tools.list();
  const messages = cx.session.history();
  const question = { role: "user", content: prompt.text };
  cx.session.append([question]);
  messages.push(question);
  for (let step = 0; step < MAX_STEPS; step++) {
    const answer = yield* ask(cx, messages, tools);
    const done = [answer, ...answer.toolCalls.map((call) => run(cx, call))];
    cx.session.append(done);
    messages.push(...done);
    if (answer.toolCalls.length === 0) return;
  }
  yield { type: "failed", details: `the model was still calling tools after ${MAX_STEPS} steps`, retryable: false, code: "turn_limit" };
});
