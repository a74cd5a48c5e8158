/**
 * Changes to what the host serves this episode, made while it runs (docs/protocol.md#tool-updates).
 * @module
 */

import { updateTool as send } from "agentenv:environment/serving@0.1.0";
import { AgentEnvError } from "./errors.js";

/**
 * Changes the description of tool `name` (as declared, or as served) for this episode: its card
 * entry and `tools/list` change together, for every caller (the reference's `update_tool`).
 * Throws an AgentEnvError `unknown_tool` when no tool has that name.
 * @param {string} name
 * @param {string} description
 */
export function updateTool(name, description) {
  try {
    send(name, description);
  } catch (error) {
    throw new AgentEnvError("unknown_tool", String(error?.payload ?? error?.message ?? error));
  }
}
