/**
 * Requests to the client of the tool call being served (the WIT `client` import): MCP
 * `sampling/createMessage`, `elicitation/create` and `roots/list`. The call waits for the
 * answer, which the host journals so that a replay gets the same one without asking again.
 * @module
 */

import { request as send } from "agentenv:environment/client@0.1.0";

/** A request got no result: the client's JSON-RPC error, or the host's (`-32601`: no MCP client
 * is calling, or it did not declare the capability; `-32001`: no answer in time). */
export class ClientError extends Error {
  constructor(code, message) {
    super(`${message} (${code})`);
    this.name = "ClientError";
    this.code = code;
    this.reason = message;
  }
}

/** Sends `method` with `params` (an object) to the calling client; answers its result. */
function request(method, params) {
  let answer;
  try {
    answer = send(method, JSON.stringify(params));
  } catch (error) {
    const refused = error?.payload ?? error;
    throw new ClientError(refused?.code ?? -32603, String(refused?.message ?? refused));
  }
  return JSON.parse(answer);
}

/** Asks the calling client: `client.sample(prompt, maxTokens)`, `client.elicit(message, schema)`,
 * or any request with `client.request(method, params)`. */
export const client = Object.freeze({
  request,
  /** The `sampling/createMessage` result for one user message. */
  sample: (prompt, maxTokens) =>
    request("sampling/createMessage", {
      messages: [{ role: "user", content: { type: "text", text: String(prompt) } }],
      maxTokens,
    }),
  /** The `elicitation/create` result, `{action, content?}`, for values shaped by `schema`. */
  elicit: (message, schema) => request("elicitation/create", { message: String(message), requestedSchema: schema }),
});
