/**
 * The slack example environment on the JavaScript SDK: the port of `guests/slack` (Rust), which
 * answers the same as `tests/reference-ports/slack/reference.py` on the Python reference SDK: channels and
 * messages, four tools (one hidden until granted), a stats extension, and an additive,
 * all-or-nothing data plane.
 * @module
 */

import { AgentEnvError, Environment, dataPart, s } from "@envhost/sdk";
import { Staged } from "./seed.js";

/** The channels, in insertion order: `{name, topic}`. */
let channels = [];
/** The messages, in append order: `{channel, text, from, to}`. */
let messages = [];

const STATS = {
  uri: "urn:example:slack-stats/v1",
  description: "Channel and message counts, and channel topics.",
};

// A channel and its topic.
const Channel = s.named("Channel", s.object({ name: s.string(), topic: s.string() }));
const MessageOut = s.named(
  "MessageOut",
  s.object(
    // A message; `from` is the role that sent it, `to` the role it is addressed to.
    { channel: s.string(), text: s.string(), from: s.nullable(s.string()), to: s.nullable(s.string()) },
  ),
);

function channelNotFound(name, options) {
  return new AgentEnvError("channel_not_found", `no channel named '${name}'`, options);
}

function requireChannel(name) {
  if (!channels.some((c) => c.name === name)) {
    throw channelNotFound(name, { hint: "list the channels with the list_channels tool" });
  }
}

const slack = new Environment({ name: "slack", toolAccess: true });

slack.onReset(function reset() {
  channels = [];
  messages = [];
});

slack.onAddData(function add(parts) {
  const staged = new Staged(channels);
  for (const part of parts) staged.part(part);
  channels = staged.channels;
  messages.push(...staged.messages);
});

slack.onGetData(function get() {
  return [dataPart({ channels, messages })];
});

slack.tool(
  {
    name: "{environment_name}_send_message",
    description: "Post a message to a channel, from the calling role, optionally addressed to another role.",
    args: {
      channel: s.string({ description: "The name of the channel to post in." }),
      text: s.string({ description: "The message text." }),
      to: s.optional(s.nullable(s.string({ description: "The role the message is addressed to, if any." }))),
    },
    returns: s.string(),
  },
  function send_message({ channel, text, to }, ctx) {
    requireChannel(channel);
    messages.push({ channel, text, from: ctx.caller.role, to });
    return "ok";
  },
);

slack.tool(
  {
    name: "{environment_name}_list_inbox",
    description: "List the messages addressed to the calling role, oldest first.",
    returns: s.array(MessageOut),
  },
  function list_inbox(_args, ctx) {
    const role = ctx.caller.role;
    if (role === null) return [];
    return messages.filter((m) => m.to === role);
  },
);

slack.tool(
  {
    name: "{environment_name}_list_channels",
    description: "List every channel with its topic.",
    returns: s.array(Channel),
    annotations: { readOnlyHint: true },
  },
  function list_channels() {
    return channels;
  },
);

slack.tool(
  {
    name: "{environment_name}_admin_purge",
    description: "Delete every message of a channel; answers how many were deleted. Hidden until granted to a role.",
    args: { channel: s.string({ description: "The channel whose messages to delete." }) },
    returns: s.integer(),
    hiddenByDefault: true,
  },
  function admin_purge({ channel }) {
    requireChannel(channel);
    const before = messages.length;
    messages = messages.filter((m) => m.channel !== channel);
    return before - messages.length;
  },
);

slack.extension({ ...STATS, op: "get", method: "GET" }, function stats_get() {
  return { channels: channels.length, messages: messages.length };
});

slack.extension(
  { ...STATS, op: "set-topic", method: "POST", request: { channel: s.string(), topic: s.string() } },
  function stats_set_topic({ channel, topic }) {
    const found = channels.find((c) => c.name === channel);
    if (found === undefined) throw channelNotFound(channel, { status: 404 });
    found.topic = topic;
    return found;
  },
);

/** The component's `agentenv:environment/env` export. */
export const env = slack.exports();
