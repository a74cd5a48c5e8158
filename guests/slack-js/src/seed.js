/**
 * Reading `data/add` parts into channels and messages, all or nothing: the JavaScript port of
 * `guests/slack/src/seed.rs`, with the same checks and messages.
 * @module
 */

import { AgentEnvError, decodeUtf8 } from "@envhost/sdk";

function invalid(message) {
  return new AgentEnvError("invalid_data", message);
}

/** Whether `value` is a JSON object (not null, not an array). */
function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** An object's own property, undefined for a missing key or a value that is not an object. */
function field(value, key) {
  return isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
}

/** A string, or null for a missing or null value; anything else is `<what> must be a string or null`. */
function optionalString(value, what) {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  throw invalid(`${what} must be a string or null`);
}

/** The list under `key`: empty when missing, null when it is not a list. */
function list(payload, key) {
  const value = field(payload, key);
  if (value === undefined) return [];
  return Array.isArray(value) ? value : null;
}

/** An add in progress: a copy of the channels with this add's upserts, and its new messages. */
export class Staged {
  /** Starts from the current channels. */
  constructor(channels) {
    /** The channels after this add: copies of the current ones, with this add's upserts. */
    this.channels = channels.map((c) => ({ ...c }));
    /** The messages this add appends. */
    this.messages = [];
  }

  /** Stages one part: text is ignored, data and file parts carry `{"channels", "messages"}`. */
  part(part) {
    if (part.kind === "text") return;
    if (part.kind === "data") {
      this.#payload(part.data);
      return;
    }
    if (part.file.uri !== undefined) throw invalid(`the file part ${part.file.uri} was not fetched`);
    let payload;
    try {
      payload = JSON.parse(decodeUtf8(part.file.bytes));
    } catch (error) {
      throw invalid(`the file part is not JSON: ${error.message}`);
    }
    this.#payload(payload);
  }

  /** Stages a `{"channels", "messages"}` object. */
  #payload(payload) {
    if (!isObject(payload)) throw invalid("the data must be a JSON object with 'channels' and/or 'messages'");
    const channels = list(payload, "channels");
    const messages = list(payload, "messages");
    if (channels === null || messages === null) throw invalid("'channels' and 'messages' must be lists");
    channels.forEach((channel, i) => this.#channel(i, channel));
    messages.forEach((message, i) => this.#message(i, message));
  }

  /** Upserts `channels[i]` by name. */
  #channel(i, channel) {
    const name = field(channel, "name");
    if (typeof name !== "string" || name === "") {
      throw invalid(`channels[${i}] must be an object with a non-empty string 'name'`);
    }
    const topic = field(channel, "topic");
    if (topic !== undefined && topic !== null && typeof topic !== "string") {
      throw invalid(`channels[${i}].topic must be a string`);
    }
    const existing = this.channels.find((c) => c.name === name);
    if (existing !== undefined) {
      existing.topic = topic ?? "";
    } else {
      this.channels.push({ name, topic: topic ?? "" });
    }
  }

  /** Appends `messages[i]`, which must name a channel that exists. */
  #message(i, message) {
    const channel = field(message, "channel");
    const text = field(message, "text");
    if (typeof channel !== "string" || typeof text !== "string") {
      throw invalid(`messages[${i}] must be an object with string 'channel' and 'text'`);
    }
    if (!this.channels.some((c) => c.name === channel)) {
      throw invalid(`messages[${i}] names unknown channel '${channel}'`);
    }
    this.messages.push({
      channel,
      text,
      from: optionalString(field(message, "from"), `messages[${i}].from`),
      to: optionalString(field(message, "to"), `messages[${i}].to`),
    });
  }
}
