/**
 * Coded errors: `AgentEnvError`, the reference SDK's way to answer a caller with a code rather
 * than a crash, and its conversion into the WIT `env-error` record.
 * @module
 */

/** The values of `applied` (protocol.md#coded-errors). */
const APPLIED = ["yes", "no", "unknown"];

/**
 * A coded error. Throw it from a tool, an extension or a data-plane handler.
 *
 * From a tool it becomes an `isError` result whose text is `"<code>: <message>"` and whose
 * structured content is `{code, message, retryable, applied, hint?}`; from an extension, HTTP
 * `status` with the body `{"ok": false, "error": {...}}`; from a data-plane handler, JSON-RPC
 * error -32000.
 */
export class AgentEnvError extends Error {
  /**
   * @param {string} code machine-readable code, e.g. `channel_not_found`
   * @param {string} message human-readable message
   * @param {{retryable?: boolean, applied?: "yes"|"no"|"unknown", hint?: string|null, status?: number}} [options]
   *   `retryable` (default false), `applied` (default "no"), `hint`, and the HTTP `status` of an
   *   extension answer (default 400)
   */
  constructor(code, message, { retryable = false, applied = "no", hint = null, status = 400 } = {}) {
    super(message);
    if (!APPLIED.includes(applied)) {
      throw new TypeError(`AgentEnvError: applied must be one of ${APPLIED.join(", ")}, not ${JSON.stringify(applied)}`);
    }
    if (!Number.isInteger(status) || status < 100 || status > 599) {
      throw new TypeError(`AgentEnvError: status must be an HTTP status code, not ${JSON.stringify(status)}`);
    }
    this.name = "AgentEnvError";
    /** Machine-readable code. */
    this.code = String(code);
    /** Whether the caller may retry the same call. */
    this.retryable = Boolean(retryable);
    /** Whether the call's effect happened: "yes", "no" or "unknown". */
    this.applied = applied;
    /** A hint for the caller, or null. */
    this.hint = hint == null ? null : String(hint);
    /** The HTTP status of an extension answer. */
    this.status = status;
  }

  /** `"<code>: <message>"`, as a tool's error text reads. */
  toString() {
    return `${this.code}: ${this.message}`;
  }
}

/**
 * The WIT `env-error` record of an error thrown by a handler: an `AgentEnvError` as it is, any
 * other exception as `fallbackCode` with the exception's text, `applied: "unknown"` (it may have
 * happened part-way) and `fallbackStatus`.
 * @param {unknown} error
 * @param {string} fallbackCode
 * @param {number} fallbackStatus
 */
export function toWitError(error, fallbackCode = "internal_error", fallbackStatus = 500) {
  if (error instanceof AgentEnvError) {
    return {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      applied: error.applied,
      hint: error.hint,
      status: error.status,
    };
  }
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { code: fallbackCode, message: text, retryable: false, applied: "unknown", hint: null, status: fallbackStatus };
}
