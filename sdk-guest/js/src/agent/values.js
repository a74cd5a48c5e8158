/**
 * Checks of the values an agent hands to the host, so that a mistake is a clear `TypeError` (a
 * failed turn) rather than a trap in the component's conversion to WIT.
 * @module
 */

/** How a value reads in an error message: as JSON when it has a JSON form. */
export function shown(value) {
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "a function";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * `value`, which must be a string.
 * @param {unknown} value
 * @param {string} what what the value is, for the error message
 * @returns {string}
 */
export function string(value, what) {
  if (typeof value !== "string") throw new TypeError(`${what} is a string, not ${shown(value)}`);
  return value;
}

/**
 * `value`, which must be a boolean.
 * @param {unknown} value
 * @param {string} what
 * @returns {boolean}
 */
export function boolean(value, what) {
  if (typeof value !== "boolean") throw new TypeError(`${what} is a boolean, not ${shown(value)}`);
  return value;
}

/**
 * `value`, which must be an integer from 0 to `max`.
 * @param {unknown} value
 * @param {string} what
 * @param {number} [max] the largest value (a WIT u32's by default)
 * @returns {number}
 */
export function count(value, what, max = 0xffff_ffff) {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new TypeError(`${what} is an integer from 0 to ${max}, not ${shown(value)}`);
  }
  return value;
}

/**
 * `value` as JSON text (a WIT `json`).
 * @param {unknown} value
 * @param {string} what
 * @returns {string}
 */
export function jsonText(value, what) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`${what} is not JSON: ${error.message}`);
  }
  if (text === undefined) throw new TypeError(`${what} is not JSON: ${shown(value)}`);
  return text;
}
