/**
 * The chat model the host brokers (the WIT `model` import): `model.complete(request)` answers
 * the streamed chunks, `{type: "text", delta}`, `{type: "thinking", delta}` and
 * `{type: "tool_call", id, name, args}`, to read with `for...of`.
 * @module
 */

import { complete as witComplete } from "agentenv:agent/model@0.1.0";

import { AgentFailure } from "./failures.js";
import { toWitMessage, toWitToolSpec } from "./messages.js";
import { count } from "./values.js";

/** Each `model-error` case's retryability and failure code. */
const CASES = {
  "rate-limited": [true, "rate_limited"],
  unavailable: [true, "model_unavailable"],
  "invalid-request": [false, "model_refused"],
};

/**
 * Why the model could not answer. It is an `AgentFailure`, so one left uncaught ends the turn
 * as the standard loop ends it: `rate_limited` and `model_unavailable` (retryable), or
 * `model_refused`.
 */
export class ModelError extends AgentFailure {
  /**
   * @param {"rate-limited"|"unavailable"|"invalid-request"} kind the WIT `model-error` case
   * @param {string} details
   * @param {number|null} [retryAfterMs] when rate limited, how long to wait
   */
  constructor(kind, details, retryAfterMs = null) {
    const [retryable, code] = CASES[kind];
    super(details, retryable, code);
    this.name = "ModelError";
    /** The WIT `model-error` case: `rate-limited`, `unavailable` or `invalid-request`. */
    this.kind = kind;
    /** When rate limited, the milliseconds to wait before trying again; else null. */
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The `ModelError` of an error a model import threw (the component throws an `Error` whose
 * `payload` is the WIT `model-error`); any other error as it is.
 */
function modelError(error) {
  const { tag, val } = error?.payload ?? {};
  switch (tag) {
    case "rate-limited":
      return new ModelError(tag, `the model is rate limited; try again in ${val} ms`, val);
    case "unavailable":
      return new ModelError(tag, `the model is unavailable: ${val}`);
    case "invalid-request":
      return new ModelError(tag, `the model refused the request: ${val}`);
    default:
      return error;
  }
}

/** A WIT `chunk` as a plain object. */
function fromWitChunk({ tag, val }) {
  if (tag === "tool-call") return { type: "tool_call", id: val.id, name: val.name, args: val.args };
  return { type: tag, delta: val };
}

/**
 * The chunks of a response, read from the host one at a time; the response is released when
 * they end or the reader stops early.
 */
function* chunks(response) {
  try {
    for (;;) {
      let chunk;
      try {
        chunk = response.next();
      } catch (error) {
        throw modelError(error);
      }
      if (chunk == null) return;
      yield fromWitChunk(chunk);
    }
  } finally {
    response[Symbol.dispose]();
  }
}

/**
 * Starts a completion: the conversation and the tools the model may call, with optional
 * `maxTokens` and `temperature`. Answers its chunks as an iterable; throws a `ModelError` when
 * the model cannot answer (reading the chunks may throw one too).
 * @param {{messages: object[], tools?: object[], maxTokens?: number|null, temperature?: number|null}} request
 * @returns {Generator<object, void, undefined>}
 */
function complete({ messages, tools = [], maxTokens = null, temperature = null }) {
  const request = {
    messages: messages.map(toWitMessage),
    tools: tools.map(toWitToolSpec),
    maxTokens: maxTokens == null ? null : count(maxTokens, "maxTokens"),
    temperature: temperature == null ? null : Number(temperature),
  };
  try {
    return chunks(witComplete(request));
  } catch (error) {
    throw modelError(error);
  }
}

/** The brokered chat model. */
export const model = Object.freeze({ complete });
