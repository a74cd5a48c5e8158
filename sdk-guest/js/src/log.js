/**
 * Structured logging into the host's log (the WIT `log` import). The host may drop records
 * beyond a rate limit.
 * @module
 */

import { write } from "agentenv:environment/log@0.1.0";

/** A record writer for one level: `(message, fields?)`, fields being a JSON object. */
function writer(level) {
  return (message, fields) => write(level, String(message), fields == null ? null : JSON.stringify(fields));
}

/** Writes records into the host's log: `log.info("loaded", {channels: 3})`. */
export const log = Object.freeze({
  trace: writer("trace"),
  debug: writer("debug"),
  info: writer("info"),
  warn: writer("warn"),
  error: writer("error"),
});
