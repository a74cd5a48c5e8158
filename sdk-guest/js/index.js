/**
 * @envhost/sdk: write an agent environment in JavaScript, built into a WebAssembly component
 * that envhost serves over the agentenv protocol (card, JSON-RPC data plane, MCP tools,
 * extensions, tool access).
 *
 * ```js
 * import { Environment, s, AgentEnvError } from "@envhost/sdk";
 *
 * let count = 0;
 * const counter = new Environment({ name: "counter" });
 * counter.tool(
 *   { name: "{environment_name}_add", description: "Add to the counter.", args: { by: s.integer() }, returns: s.integer() },
 *   function add({ by }) {
 *     count += by;
 *     return count;
 *   },
 * );
 * export const env = counter.exports();
 * ```
 * @module
 */

export { ToolContext } from "./src/context.js";
export { Environment, DefinitionError, ToolResult } from "./src/environment.js";
export { AgentEnvError } from "./src/errors.js";
export { log } from "./src/log.js";
export { client, ClientError } from "./src/client.js";
export { progress } from "./src/progress.js";
export { updateTool } from "./src/serving.js";
export {
  DATA_OBJECTS_EXTENSION_URI,
  NamespaceUploader,
  TransferError,
  uploadedFilePart,
} from "./src/transfers.js";
export { textPart, dataPart, filePart, decodeUtf8, encodeUtf8 } from "./src/parts.js";
export { s } from "./src/schema.js";
