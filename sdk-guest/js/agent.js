/**
 * @envhost/sdk/agent: write an agent in JavaScript, built into a WebAssembly component of the
 * world `agentenv:agent/agent@0.1.0` that envhost runs, one fresh instance per turn.
 *
 * ```js
 * import { defineAgent } from "@envhost/sdk/agent";
 *
 * export const handler = defineAgent(function* invoke(scope, prompt, cx) {
 *   const messages = [...cx.session.history(), { role: "user", content: prompt.text }];
 *   for (const chunk of cx.model.complete({ messages })) {
 *     if (chunk.type === "text") yield chunk;
 *   }
 *   yield { type: "completed" };
 * });
 * ```
 * @module
 */

export { defineAgent } from "./src/agent/handler.js";
export { AgentFailure } from "./src/agent/failures.js";
export { ModelError, model } from "./src/agent/model.js";
export { ToolCallError, tools } from "./src/agent/tools.js";
export { session } from "./src/agent/session.js";
