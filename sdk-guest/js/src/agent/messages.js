/**
 * The conversation's messages and tools between their WIT form and plain objects:
 * `{role, content, toolCalls: [{id, name, args}], toolCallId}` and `{name, description,
 * inputSchema}`. A tool call's `args` is the JSON text the model wrote, as Chat Completions
 * carries it (it may not be valid JSON); an object given instead is written as JSON.
 * @module
 */

import { jsonText, shown, string } from "./values.js";

/** The WIT `role` enum's cases. */
const ROLES = new Set(["system", "user", "assistant", "tool"]);

/** A tool call's arguments as JSON text: a string as it is, anything else written as JSON. */
export function argsText(args, name) {
  return typeof args === "string" ? args : jsonText(args, `the arguments of ${name}`);
}

/**
 * The WIT `message` of a message; `toolCalls` and `toolCallId` may be left out.
 * @param {{role: string, content?: string, toolCalls?: Array<{id: string, name: string, args: unknown}>, toolCallId?: string|null}} message
 */
export function toWitMessage(message) {
  const { role, content = "", toolCalls, toolCallId = null } = message ?? {};
  if (!ROLES.has(role)) throw new TypeError(`a message's role is "system", "user", "assistant" or "tool", not ${shown(role)}`);
  return {
    role,
    content: string(content, `the content of a ${role} message`),
    toolCalls: (toolCalls ?? []).map((call) => ({
      id: string(call.id, "a tool call's id"),
      name: string(call.name, "a tool call's name"),
      args: argsText(call.args, call.name),
    })),
    toolCallId: toolCallId == null ? null : string(toolCallId, "toolCallId"),
  };
}

/** A message of the session as a plain object (every field present). */
export function fromWitMessage(message) {
  return {
    role: message.role,
    content: message.content,
    toolCalls: message.toolCalls.map(({ id, name, args }) => ({ id, name, args })),
    toolCallId: message.toolCallId ?? null,
  };
}

/**
 * The WIT `tool-spec` of a tool: its input schema an object (written as JSON) or JSON text.
 * @param {{name: string, description?: string, inputSchema?: object|string}} tool
 */
export function toWitToolSpec(tool) {
  const { name, description = "", inputSchema = { type: "object" } } = tool ?? {};
  return {
    name: string(name, "a tool's name"),
    description: string(description, `the description of ${name}`),
    inputSchema: typeof inputSchema === "string" ? inputSchema : jsonText(inputSchema, `the input schema of ${name}`),
  };
}

/** A tool of the environment, its input schema parsed. */
export function fromWitToolSpec(tool) {
  return { name: tool.name, description: tool.description, inputSchema: JSON.parse(tool.inputSchema) };
}
