// Stand-ins for the agent world's imports, in the shapes componentize-qjs gives them (records
// with camelCase keys, variants as {tag, val}, an err as a thrown Error whose `payload` is the
// WIT value): `emit` records into `host.emitted`; `complete` answers `host.answers` in order;
// `callTool` answers `host.toolAnswer`; `history` answers `host.history`; `append` records into
// `host.appended`. `resetHost()` starts a test afresh.

/** What the mocks answer and what they saw. */
export const host = {};

/** Empties the host's state. */
export function resetHost() {
  Object.assign(host, {
    emitted: [],
    requests: [],
    /** Each an array of WIT chunks (a WitError among them fails `next`), or a WitError. */
    answers: [],
    responses: [],
    tools: [],
    calls: [],
    /** A WIT tool-output, or a WitError. */
    toolAnswer: { isError: false, content: "[]" },
    history: [],
    appended: [],
  });
}
resetHost();

/** A WIT err value, as the component throws it from an import. */
export class WitError extends Error {
  constructor(payload) {
    super(typeof payload === "string" ? payload : `${String(payload)} (see error.payload)`);
    this.payload = payload;
  }
}

export function emit(event) {
  host.emitted.push(event);
}

/** A `model.response` resource. */
class Response {
  constructor(chunks) {
    this.chunks = [...chunks];
    this.disposed = false;
  }

  next() {
    const chunk = this.chunks.shift();
    if (chunk instanceof WitError) throw chunk;
    return chunk ?? null;
  }

  [Symbol.dispose]() {
    this.disposed = true;
  }
}

export function complete(request) {
  host.requests.push(request);
  const answer = host.answers.shift() ?? [{ tag: "text", val: "(no script)" }];
  if (answer instanceof WitError) throw answer;
  const response = new Response(answer);
  host.responses.push(response);
  return response;
}

export function listTools() {
  return host.tools;
}

export function callTool(callId, name, args) {
  host.calls.push([callId, name, args]);
  if (host.toolAnswer instanceof WitError) throw host.toolAnswer;
  return host.toolAnswer;
}

export function history() {
  return host.history;
}

export function append(entries) {
  host.appended.push(...entries);
}
