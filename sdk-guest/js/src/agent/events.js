/**
 * Agent Handler events (`{type: "text", delta}`, ...) as the WIT `progress` that `events.emit`
 * sends, and the two terminals, which end a turn instead.
 * @module
 */

import { boolean, count, jsonText, shown, string } from "./values.js";

/** The terminal events' types: the first one an agent yields ends its turn. */
const TERMINALS = new Set(["completed", "failed"]);

/** Whether `event` is a terminal event (`completed` or `failed`). */
export function isTerminal(event) {
  return TERMINALS.has(event?.type);
}

/**
 * The WIT `progress` of a non-terminal event. A type the WIT does not know is an extension event,
 * relayed as `{"type": name, ...body}`: the rest of the object is its body.
 * @param {unknown} event
 * @returns {{tag: string, val: unknown}}
 */
export function toProgress(event) {
  if (event === null || typeof event !== "object" || Array.isArray(event)) {
    throw new TypeError(`an agent yields event objects ({type, ...}), not ${shown(event)}`);
  }
  const { type, ...body } = event;
  if (typeof type !== "string" || type === "") {
    throw new TypeError(`an event's type is a non-empty string, not ${shown(type)}`);
  }
  switch (type) {
    case "text":
    case "thinking":
      return { tag: type, val: string(event.delta, `${type}.delta`) };
    case "tool_started":
      return {
        tag: "tool-started",
        val: { id: string(event.id, "tool_started.id"), name: string(event.name, "tool_started.name"), args: jsonText(event.args, "tool_started.args") },
      };
    case "tool_ended":
      return {
        tag: "tool-ended",
        val: { id: string(event.id, "tool_ended.id"), isError: boolean(event.isError, "tool_ended.isError"), content: jsonText(event.content, "tool_ended.content") },
      };
    case "tool_progress":
      return { tag: "tool-progress", val: { id: string(event.id, "tool_progress.id"), text: string(event.text, "tool_progress.text") } };
    case "retrying":
      return {
        tag: "retrying",
        val: {
          attempt: count(event.attempt, "retrying.attempt"),
          maxAttempts: count(event.maxAttempts, "retrying.maxAttempts"),
          delayMs: count(event.delayMs, "retrying.delayMs", Number.MAX_SAFE_INTEGER),
          reason: string(event.reason, "retrying.reason"),
        },
      };
    default:
      return { tag: "extension", val: { name: type, body: jsonText(body, `the body of a ${type} event`) } };
  }
}
