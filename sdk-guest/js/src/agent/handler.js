/**
 * `defineAgent`: the WIT `handler` export of a turn written as a generator of Agent Handler
 * events.
 *
 * The component runs synchronously: envhost runs components without component-model async, and
 * componentize-qjs's runtime for them (`--sync`) calls the export and lowers what it returns at
 * once. It runs QuickJS's job queue only for component-model async exports, so a promise reaction
 * (the code after an `await`, the next step of an `async function*`) never runs. A turn is
 * therefore a `function*`, driven here step by step; the host's imports it calls answer
 * synchronously.
 * @module
 */

import { emit } from "agentenv:agent/events@0.1.0";

import { failedEvent, toWitFailure } from "./failures.js";
import { isTerminal, toProgress } from "./events.js";
import { model } from "./model.js";
import { session } from "./session.js";
import { tools } from "./tools.js";
import { jsonText, shown } from "./values.js";

/** What a turn's function receives third: the host's brokers. */
const CONTEXT = Object.freeze({ model, tools, session });

/** Why an async turn function is refused. */
const ASYNC_REFUSED =
  "an agent's turn is a synchronous generator, `function* invoke(scope, prompt, cx)`: the component " +
  "never runs promise reactions, so an `async` function would stop at its first `await` or `yield`; " +
  "the model, tools and session answer synchronously, without `await`";

/** The kinds of function that cannot be driven synchronously. */
const ASYNC_KINDS = new Set(["[object AsyncFunction]", "[object AsyncGeneratorFunction]"]);

/**
 * The synchronous iterator of what a turn's function answered.
 * @param {unknown} events
 * @returns {Iterator<unknown>}
 */
function iteratorOf(events) {
  if (typeof events?.[Symbol.iterator] === "function") return events[Symbol.iterator]();
  if (typeof events?.[Symbol.asyncIterator] === "function" || typeof events?.then === "function") {
    throw new TypeError(ASYNC_REFUSED);
  }
  throw new TypeError(`an agent's turn function answers an iterable of events (write it as a function*), not ${shown(events)}`);
}

/**
 * Runs a turn to its terminal: each non-terminal event the function yields is emitted; the first
 * terminal it yields, or what it returns, ends the turn. The generator is closed in every case,
 * so its `finally` blocks run.
 * @returns {unknown} the terminal event, or the return value
 */
function drive(invoke, scope, prompt) {
  const events = iteratorOf(invoke(scope, prompt, CONTEXT));
  try {
    for (;;) {
      const step = events.next();
      if (step.done || isTerminal(step.value)) return step.value;
      emit(toProgress(step.value));
    }
  } finally {
    events.return?.();
  }
}

/**
 * The WIT `completion` of how a turn ended: a `completed` event, `{data}` or nothing returned;
 * a `failed` event is thrown as an `AgentFailure`.
 */
function completion(end) {
  if (end == null) return { data: null };
  if (typeof end !== "object" || Array.isArray(end) || (end.type !== undefined && !isTerminal(end))) {
    throw new TypeError(`an agent's turn returns nothing, {data} or a terminal event, not ${shown(end)}`);
  }
  if (end.type === "failed") throw failedEvent(end);
  return { data: end.data == null ? null : jsonText(end.data, "completed.data") };
}

/**
 * The WIT `handler` export of a turn function, `function* invoke(scope, prompt, cx)`:
 *
 * - it yields Agent Handler events (`text`, `thinking`, `tool_started`, `tool_ended`,
 *   `tool_progress`, `retrying`, or any other type as an extension event whose body is the rest
 *   of the object), each emitted as it is yielded;
 * - the first `completed` or `failed` it yields ends the turn; returning ends it `completed`,
 *   with the data of a returned `{data}`;
 * - a thrown `AgentFailure` (a `ModelError` included) ends it with that failure, any other error
 *   with `failed{code: "agent_error", retryable: false}`;
 * - `cx` is `{model, tools, session}`, the host's brokers.
 *
 * Export the answer as `handler`: `export const handler = defineAgent(function* invoke(...) {...})`.
 * @param {(scope: object, prompt: object, cx: object) => Iterable<object>} invoke
 * @returns {{invoke: (scope: object, prompt: object) => {data: string|null}}}
 */
export function defineAgent(invoke) {
  if (typeof invoke !== "function") throw new TypeError("defineAgent takes the turn's function, function* invoke(scope, prompt, cx)");
  if (ASYNC_KINDS.has(Object.prototype.toString.call(invoke))) throw new TypeError(ASYNC_REFUSED);
  return Object.freeze({
    invoke(scope, prompt) {
      try {
        return completion(drive(invoke, scope, prompt));
      } catch (error) {
        // A thrown plain object is the export's err: the `failed` terminal.
        throw toWitFailure(error);
      }
    },
  });
}
