/**
 * The tools of the environment episode the agent is bound to (the WIT `env-tools` import). The
 * host emits `tool_started` and `tool_ended` around every call itself: an agent does not yield
 * them for these calls.
 * @module
 */

import { callTool, listTools } from "agentenv:agent/env-tools@0.1.0";

import { argsText, fromWitToolSpec } from "./messages.js";
import { string } from "./values.js";

/**
 * A tool call the host could not make: an unknown tool, or arguments that are not a JSON
 * object. (A tool's own failure is an answer with `isError`, not this.)
 */
export class ToolCallError extends Error {
  constructor(message) {
    super(message);
    this.name = "ToolCallError";
  }
}

/**
 * Calls tool `name` with `args` (an object, or the JSON text a model wrote) under the call id
 * `id`, which the host's `tool_started` and `tool_ended` events carry. Answers `{isError,
 * content}`, `content` being the result's MCP content blocks; throws a `ToolCallError` when the
 * call could not be made.
 * @param {string} id
 * @param {string} name
 * @param {object|string} [args]
 * @returns {{isError: boolean, content: object[]}}
 */
function call(id, name, args = {}) {
  let output;
  try {
    output = callTool(string(id, "a tool call's id"), string(name, "a tool's name"), argsText(args, name));
  } catch (error) {
    if (typeof error?.payload === "string") throw new ToolCallError(error.payload);
    throw error;
  }
  return { isError: output.isError, content: JSON.parse(output.content) };
}

/** The environment's tools: `list()` answers `[{name, description, inputSchema}]`, `call(id, name, args)` calls one. */
export const tools = Object.freeze({
  list: () => listTools().map(fromWitToolSpec),
  call,
});
