// Stand-ins for the host's imports: `context.current` answers the call set with `setCall`, and
// `log.write` records into `records`.
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
