/**
 * `ToolContext`: the call being served (protocol.md#callers), read from the host's `context` import.
 * @module
 */

import { current } from "agentenv:environment/context@0.1.0";

/** The caller and the call of a tool or extension call; empty outside one. */
export class ToolContext {
  /**
   * @param {{role: string|null, session: string|null}} caller who is calling: the role
   *   (normalised by the host: null for none, "" or "default") and the session that tells
   *   callers of one role apart
   * @param {string|null} tool the tool's resolved name; for an extension call, `<uri>#<op>`
   * @param {object} args the arguments object exactly as received
   * @param {string|null} callId a fresh identifier of this call, 32 lowercase hex digits
   */
  constructor(caller, tool, args, callId) {
    /** Who is calling: `{role, session}`. */
    this.caller = Object.freeze({ role: caller.role, session: caller.session });
    /** The tool's resolved name (for an extension, `<uri>#<op>`), or null outside a call. */
    this.tool = tool;
    /** The arguments object exactly as received (before defaults were applied). */
    this.arguments = args;
    /** The call's identifier, or null outside a call. */
    this.callId = callId;
    Object.freeze(this);
  }

  /**
   * The context of the call being served, or an empty one (no role, no session, no tool) outside
   * any call: during reset, add-data and get-data.
   * @returns {ToolContext}
   */
  static current() {
    const call = current();
    if (call == null) return new ToolContext({ role: null, session: null }, null, {}, null);
    return new ToolContext(
      { role: call.caller.role ?? null, session: call.caller.session ?? null },
      call.tool,
      JSON.parse(call.arguments),
      call.callId,
    );
  }
}
