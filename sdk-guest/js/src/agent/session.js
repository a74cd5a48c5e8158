/**
 * The session's conversation, held by the host (the WIT `session` import): the only state that
 * outlives a turn, since every turn runs in a fresh instance.
 * @module
 */

import { append, history } from "agentenv:agent/session@0.1.0";

import { fromWitMessage, toWitMessage } from "./messages.js";

/**
 * The session: `history()` answers its messages, oldest first; `append(messages)` adds messages
 * at its end.
 */
export const session = Object.freeze({
  history: () => history().map(fromWitMessage),
  append: (messages) => append(messages.map(toWitMessage)),
});
