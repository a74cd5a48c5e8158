/**
 * Data-plane parts (protocol.md#parts) between their WIT form and plain JavaScript objects:
 * `{kind: "text", text, metadata}`, `{kind: "data", data, metadata}` and
 * `{kind: "file", file: {bytes} | {uri}, mimeType, name, metadata}`.
 * @module
 */

import { AgentEnvError } from "./errors.js";

/**
 * A byte list as a Uint8Array (engines hand `list<u8>` over as a Uint8Array, an ArrayBuffer or an
 * array).
 */
function toBytes(value) {
  return value instanceof Uint8Array ? value : new Uint8Array(value);
}

/** A WIT `option<json>` as a value, null for none. */
function parseOptionalJson(text) {
  return text == null ? null : JSON.parse(text);
}

/** A value as a WIT `option<json>`: none for null and undefined. */
function optionalJson(value) {
  return value == null ? null : JSON.stringify(value);
}

/**
 * A part as the add-data handler receives it.
 * @param {{tag: string, val: any}} part the WIT `part`
 */
export function fromWitPart(part) {
  const { tag, val } = part;
  const metadata = parseOptionalJson(val.metadata);
  switch (tag) {
    case "text":
      return { kind: "text", text: val.text, metadata };
    case "data":
      return { kind: "data", data: JSON.parse(val.data), metadata };
    case "file": {
      const file = val.file.tag === "bytes" ? { bytes: toBytes(val.file.val) } : { uri: val.file.val };
      return { kind: "file", file, mimeType: val.mimeType ?? null, name: val.name ?? null, metadata };
    }
    default:
      throw new AgentEnvError("invalid_part", `unknown part kind '${tag}'`);
  }
}

/**
 * The WIT `part` of a part a get-data handler answered.
 * @param {object} part
 */
export function toWitPart(part) {
  const metadata = optionalJson(part?.metadata);
  switch (part?.kind) {
    case "text":
      return { tag: "text", val: { text: String(part.text), metadata } };
    case "data":
      if (part.data === null || typeof part.data !== "object" || Array.isArray(part.data)) {
        throw new AgentEnvError("invalid_part", "a data part holds a JSON object");
      }
      return { tag: "data", val: { data: JSON.stringify(part.data), metadata } };
    case "file": {
      const { bytes, uri } = part.file ?? {};
      if ((bytes === undefined) === (uri === undefined)) {
        throw new AgentEnvError("invalid_part", "a file part holds either bytes or a uri");
      }
      const file = bytes !== undefined ? { tag: "bytes", val: toBytes(bytes) } : { tag: "uri", val: String(uri) };
      return { tag: "file", val: { file, mimeType: part.mimeType ?? null, name: part.name ?? null, metadata } };
    }
    default:
      throw new AgentEnvError("invalid_part", `a part's kind is "text", "data" or "file", not ${JSON.stringify(part?.kind)}`);
  }
}

/** A text part. */
export function textPart(text, metadata = null) {
  return { kind: "text", text, metadata };
}

/** A data part holding `data`, a JSON object. */
export function dataPart(data, metadata = null) {
  return { kind: "data", data, metadata };
}

/**
 * A file part: `file` is `{bytes: Uint8Array}` or `{uri: string}`.
 * @param {{bytes: Uint8Array} | {uri: string}} file
 * @param {{mimeType?: string|null, name?: string|null, metadata?: object|null}} [options]
 */
export function filePart(file, { mimeType = null, name = null, metadata = null } = {}) {
  return { kind: "file", file, mimeType, name, metadata };
}

/**
 * Encodes a string as UTF-8, a lone surrogate as U+FFFD as `TextEncoder` does. (QuickJS has no
 * TextEncoder.)
 * @param {string} text
 * @returns {Uint8Array}
 */
export function encodeUtf8(text) {
  // At most three bytes per UTF-16 unit: a surrogate pair (two units) is four.
  const bytes = new Uint8Array(text.length * 3);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else {
        code = 0xfffd;
      }
    }
    if (code < 0x80) {
      bytes[n++] = code;
    } else if (code < 0x800) {
      bytes[n++] = 0xc0 | (code >> 6);
      bytes[n++] = 0x80 | (code & 0x3f);
    } else if (code < 0x10000) {
      bytes[n++] = 0xe0 | (code >> 12);
      bytes[n++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[n++] = 0x80 | (code & 0x3f);
    } else {
      bytes[n++] = 0xf0 | (code >> 18);
      bytes[n++] = 0x80 | ((code >> 12) & 0x3f);
      bytes[n++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[n++] = 0x80 | (code & 0x3f);
    }
  }
  return bytes.slice(0, n);
}

/**
 * Decodes UTF-8 bytes strictly: invalid UTF-8 throws a TypeError, as a JSON file that is not
 * UTF-8 must fail to load. (QuickJS has no TextDecoder.)
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function decodeUtf8(bytes) {
  const chunks = [];
  let units = [];
  let i = 0;
  const invalid = () => new TypeError(`invalid UTF-8 at byte ${i}`);
  while (i < bytes.length) {
    const b0 = bytes[i];
    let code;
    let size;
    if (b0 < 0x80) {
      code = b0;
      size = 1;
    } else if (b0 >= 0xc2 && b0 <= 0xdf) {
      code = b0 & 0x1f;
      size = 2;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      code = b0 & 0x0f;
      size = 3;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      code = b0 & 0x07;
      size = 4;
    } else {
      throw invalid();
    }
    if (i + size > bytes.length) throw invalid();
    for (let k = 1; k < size; k++) {
      const b = bytes[i + k];
      if ((b & 0xc0) !== 0x80) throw invalid();
      code = (code << 6) | (b & 0x3f);
    }
    const overlong = (size === 3 && code < 0x800) || (size === 4 && code < 0x10000);
    if (overlong || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw invalid();
    if (code < 0x10000) {
      units.push(code);
    } else {
      units.push(0xd800 + ((code - 0x10000) >> 10), 0xdc00 + ((code - 0x10000) & 0x3ff));
    }
    if (units.length >= 8192) {
      chunks.push(String.fromCharCode(...units));
      units = [];
    }
    i += size;
  }
  chunks.push(String.fromCharCode(...units));
  return chunks.join("");
}
