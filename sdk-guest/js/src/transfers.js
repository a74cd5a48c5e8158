/**
 * Uploading an export under the `write_namespace` grant of the `data/get` being served, shaped
 * like the reference's `agentenv_protocol.transfers` (docs/protocol.md#exports).
 *
 * `environment.onGetData(handler, { writeNamespace: true })` declares
 * `urn:agentenv:data-objects/v1`; `handler(writeNamespace)` is called with the caller's grant, or
 * null when the caller sent none. It uploads with a `NamespaceUploader` and answers
 * `uploadedFilePart`s. The grant's URL and policy stay in the host: the guest sees its limits
 * only. The host keeps the bytes out of the guest's memory, checks the limits as the reference
 * does before anything leaves (a path uploaded again counts once, at its latest size), and tries
 * an upload again while the grant lasts when the store is unavailable or slow.
 * @module
 */

import { begin, finish, grant as hostGrant, write } from "agentenv:environment/upload@0.1.0";
import { encodeUtf8, filePart } from "./parts.js";

/** The URI an environment exporting through grants declares, and the uploaded parts' metadata key. */
export const DATA_OBJECTS_EXTENSION_URI = "urn:agentenv:data-objects/v1";

const STATUS = {
  invalid_transfer: [400, false],
  grant_expired: [410, false],
  transfer_too_large: [413, false],
  integrity_mismatch: [422, false],
  transfer_rejected: [502, false],
  transfer_unavailable: [502, true],
  transfer_timeout: [504, true],
};

/** A failed transfer, with the reference's code, HTTP status and message. */
export class TransferError extends Error {
  constructor(code, message, retryable = undefined) {
    super(message);
    this.name = "TransferError";
    this.code = code;
    const [status, retryableByDefault] = STATUS[code] ?? [502, false];
    this.statusCode = status;
    this.retryable = retryable ?? retryableByDefault;
  }

  /** `{error: {code, message, retryable}}`. */
  body() {
    return { error: { code: this.code, message: this.message, retryable: this.retryable } };
  }
}

/** The grant of the `data/get` being served, `{maxObjects, maxObjectBytes, maxTotalBytes}`; null
 * when its caller sent none. */
export function grant() {
  const limits = hostGrant();
  if (limits === undefined || limits === null) return null;
  return Object.freeze({
    maxObjects: Number(limits.maxObjects),
    maxObjectBytes: Number(limits.maxObjectBytes),
    maxTotalBytes: Number(limits.maxTotalBytes),
  });
}

function transferError(error) {
  const refused = error?.payload ?? error;
  return new TransferError(refused?.code ?? "invalid_transfer", String(refused?.message ?? refused), refused?.retryable);
}

function bytesOf(chunk) {
  return typeof chunk === "string" ? encodeUtf8(chunk) : chunk;
}

/** Uploads objects under one namespace grant within its limits, one at a time (the reference's
 * `NamespaceUploader`). */
export class NamespaceUploader {
  /** @param {object} target the grant `onGetData`'s handler was given */
  constructor(target) {
    this.target = target;
  }

  /**
   * Uploads or overwrites `relativePath` under the namespace root; throws a TransferError.
   * @param {string} relativePath a normalized relative POSIX path
   * @param {Uint8Array | string | Iterable<Uint8Array | string>} source the bytes, a string
   *   (UTF-8), or chunks of either, written one at a time
   * @returns {{sizeBytes: number, sha256: string}} what was stored
   */
  upload(relativePath, source) {
    const chunks = source instanceof Uint8Array || typeof source === "string" ? [source] : source;
    try {
      begin(relativePath);
      for (const chunk of chunks) write(bytesOf(chunk));
      const stored = finish();
      return { sizeBytes: Number(stored.sizeBytes), sha256: stored.sha256 };
    } catch (error) {
      throw transferError(error);
    }
  }
}

/**
 * The `data/get` part naming an object uploaded under the grant at `path`, relative to its root
 * (the reference's `uploaded_file_part`).
 * @param {string} path
 * @param {{name?: string, mimeType?: string}} [options]
 */
export function uploadedFilePart(path, { name = null, mimeType = null } = {}) {
  if (path.includes("\\") || path.split("/").some((s) => s === "" || s === "." || s === "..")) {
    throw new TypeError("the path must be a normalized relative POSIX path");
  }
  return filePart({ uri: path }, { name, mimeType, metadata: { [DATA_OBJECTS_EXTENSION_URI]: { path } } });
}
