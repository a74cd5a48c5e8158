// Stand-ins for the host's imports: `context.current` answers the call set with `setCall`,
// `log.write` records into `records`, `progress.report` into `reports`, and `client.request`
// into `requests`.
let call = null;

/** The log records written, as [level, message, fields]. */
export const records = [];

/** Sets the call that `current` answers (null: outside a call). */
export function setCall(value) {
  call = value;
}

export function current() {
  return call;
}

export function write(level, message, fields) {
  records.push([level, message, fields]);
}

/** The tool descriptions changed, as [name, description]. */
export const updates = [];

export function updateTool(name, description) {
  updates.push([name, description]);
}

/** The progress reports, as [done, total, message]. */
export const reports = [];

export function report(done, total, message) {
  reports.push([done, total, message]);
}

/** The client requests, as [method, params]; each is answered `{"asked": method}`, but
 * `roots/list`, which is refused as a host refuses a request with no client. */
export const requests = [];

export function request(method, params) {
  requests.push([method, JSON.parse(params)]);
  if (method === "roots/list") {
    const error = new Error("refused");
    error.payload = { code: -32601, message: "the client did not declare the roots capability" };
    throw error;
  }
  return JSON.stringify({ asked: method });
}
