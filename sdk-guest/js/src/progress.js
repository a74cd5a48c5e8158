/**
 * Progress of the tool call being served (the WIT `progress` import), sent to an MCP caller that
 * asked for it as `notifications/progress`; a no-op otherwise.
 * @module
 */

import { report as send } from "agentenv:environment/progress@0.1.0";

/** Reports `done` (growing with each report) out of `total`, with an optional message. */
export function progress(done, total = null, message = null) {
  send(Number(done), total == null ? null : Number(total), message == null ? null : String(message));
}
