/**
 * How a turn fails: `AgentFailure`, the error an agent throws to end its turn with a chosen
 * `failed` terminal, and the WIT `failure` of whatever ended a turn.
 * @module
 */

/**
 * A failure the agent chooses, thrown (or yielded as `{type: "failed", details, retryable,
 * code}`): the turn ends with `failed{details, retryable, code}`. The name and arguments are
 * those of the error fastagent's `collect` throws.
 */
export class AgentFailure extends Error {
  /**
   * @param {string} details what went wrong
   * @param {boolean} [retryable] whether sending the prompt again may succeed
   * @param {string|null} [code] a machine-readable code, e.g. `rate_limited`
   */
  constructor(details, retryable = false, code = null) {
    super(details);
    this.name = "AgentFailure";
    /** What went wrong. */
    this.details = String(details);
    /** Whether sending the prompt again may succeed. */
    this.retryable = retryable === true;
    /** A machine-readable code, or null. */
    this.code = code == null ? null : String(code);
  }
}

/**
 * The `AgentFailure` of a yielded `failed` event. Its fields are taken leniently (a missing
 * `retryable` is false), so that a sloppy failure still ends the turn with its details.
 * @param {{details?: unknown, retryable?: unknown, code?: unknown}} event
 */
export function failedEvent(event) {
  return new AgentFailure(event.details == null ? "failed" : String(event.details), event.retryable, event.code);
}

/**
 * The WIT `failure` of what a turn threw: an `AgentFailure` (a `ModelError` included) as it
 * says; anything else `agent_error`, not retryable, with the error's name and message.
 * @param {unknown} error
 * @returns {{details: string, retryable: boolean, code: string|null}}
 */
export function toWitFailure(error) {
  if (error instanceof AgentFailure) {
    return { details: error.details, retryable: error.retryable, code: error.code };
  }
  const details = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { details, retryable: false, code: "agent_error" };
}
