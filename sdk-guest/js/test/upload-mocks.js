// A stand-in for the host's `upload` import: `setGrant` sets the grant `grant` answers, and the
// objects begun, written and finished are kept in `objects` by path; a path containing `..` is
// refused as the host refuses it.
let limits = null;
let open = null;

/** The objects finished, by path: their bytes. */
export const objects = new Map();

/** Sets the grant `grant` answers (null: no grant). */
export function setGrant(value) {
  limits = value;
}

export function grant() {
  return limits;
}

function refuse(code, message) {
  const error = new Error(message);
  error.payload = { code, message, retryable: false };
  throw error;
}

export function begin(path) {
  if (limits === null) refuse("invalid_transfer", "No write_namespace grant came with the data/get being served.");
  if (path.split("/").includes("..")) refuse("invalid_transfer", "The namespace upload path is invalid.");
  open = { path, chunks: [] };
}

export function write(bytes) {
  open.chunks.push(Buffer.from(bytes));
}

export function finish() {
  const bytes = Buffer.concat(open.chunks);
  objects.set(open.path, bytes);
  open = null;
  return { sizeBytes: BigInt(bytes.length), sha256: "0".repeat(64) };
}
