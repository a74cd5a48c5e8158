/**
 * The ticket desk of `../reference.py` (written for the reference Python SDK), ported by hand to
 * the JavaScript SDK; it answers clients exactly as the original does. It exercises a hook that
 * refuses calls before the tool runs (`onToolCall`), a hook that rewrites a tool's description
 * (`served`), a hidden tool with its `_meta`, a verbatim `ToolResult` with an image, an extension
 * served with `op`s and extension-level params, a declaration-only extension, and coded errors
 * with hints and statuses.
 * @module
 */

import { AgentEnvError, Environment, ToolResult, dataPart, s } from "@envhost/sdk";

const ADMIN_URI = "urn:example:tickets-admin/v1";
const INTAKE_URI = "urn:agentenv:intake/v1";
/** A 1x1 red PNG, base64: the queue's chart. */
const CHART = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** The tickets, in the order they were opened: `{id, title, priority, status, owner}`. */
let tickets = [];

const Ticket = s.named(
  "Ticket",
  s.object({
    id: s.integer(),
    title: s.string(),
    priority: s.integer(),
    status: s.string(),
    owner: s.nullable(s.string()),
  }),
);

function ticketNotFound(id, options) {
  return new AgentEnvError("ticket_not_found", `no ticket ${id}`, options);
}

const desk = new Environment({ name: "tickets", toolAccess: true });

// ---------------------------------------------------------------- mount hooks

desk.served((info) => ({
  ...info,
  tools: info.tools.map((t) =>
    t.name.endsWith("_queue") ? { ...t, description: "Lists the open tickets, most urgent first." } : t,
  ),
}));

desk.onToolCall((ctx) => {
  if (ctx.caller.role === "viewer" && !ctx.tool.endsWith("_queue")) {
    return new ToolResult([{ type: "text", text: "viewers may only read the queue" }], { isError: true });
  }
  return null;
});

// ---------------------------------------------------------------- data plane

desk.onReset(function reset() {
  tickets = [];
});

desk.onAddData(function add(parts) {
  const added = [];
  for (const part of parts) {
    if (part.kind !== "data") throw new Error("tickets load from data parts only");
    for (const ticket of part.data.tickets ?? []) {
      added.push({
        id: added.length + 1,
        title: String(ticket.title),
        priority: Math.trunc(Number(ticket.priority ?? 3)),
        status: "open",
        owner: ticket.owner ?? null,
      });
    }
  }
  tickets = added;
});

desk.onGetData(function get() {
  return [dataPart({ tickets })];
});

// ---------------------------------------------------------------- tools

desk.tool(
  {
    name: "{environment_name}_open",
    description: "Opens a ticket owned by the caller.",
    args: {
      title: s.string({ description: "What is wrong." }),
      priority: s.optional(s.integer({ description: "1 (urgent) to 5." }), 3),
    },
    returns: Ticket,
    annotations: { destructiveHint: false },
  },
  function open_ticket({ title, priority }, ctx) {
    if (!(priority >= 1 && priority <= 5)) {
      throw new AgentEnvError("invalid_priority", `priority ${priority} is not between 1 and 5`, {
        hint: "use 1 for urgent and 5 for whenever",
      });
    }
    const ticket = { id: tickets.length + 1, title, priority, status: "open", owner: ctx.caller.role };
    tickets.push(ticket);
    return ticket;
  },
);

desk.tool(
  {
    name: "{environment_name}_queue",
    description: "Lists the open tickets.",
    returns: s.array(Ticket),
    annotations: { readOnlyHint: true },
  },
  function queue() {
    return tickets.filter((t) => t.status === "open").sort((a, b) => a.priority - b.priority || a.id - b.id);
  },
);

desk.tool({ name: "{environment_name}_chart", description: "The queue as a chart." }, function chart() {
  return new ToolResult(
    [
      { type: "text", text: `${tickets.length} tickets` },
      { type: "image", data: CHART, mimeType: "image/png" },
    ],
    { structuredContent: { tickets: tickets.length } },
  );
});

desk.tool(
  {
    name: "{environment_name}_escalate",
    description: "Raises a ticket to priority 1.",
    args: { ticket: s.integer({ description: "The ticket's id." }) },
    returns: s.string(),
    hiddenByDefault: true,
    meta: { "example.com/owner": "ops" },
  },
  function escalate({ ticket }) {
    const found = tickets.find((t) => t.id === ticket);
    if (found === undefined) throw ticketNotFound(ticket);
    found.priority = 1;
    return "escalated";
  },
);

// ---------------------------------------------------------------- extension

const ADMIN = { uri: ADMIN_URI, params: { max_priority: 5 } };

desk.extension({ ...ADMIN, op: "count", method: "GET", description: "Ticket administration." }, function count() {
  return { open: tickets.filter((t) => t.status === "open").length, all: tickets.length };
});

desk.extension({ ...ADMIN, op: "close", method: "POST", request: { ticket: s.integer() } }, function close({ ticket }) {
  const found = tickets.find((t) => t.id === ticket);
  if (found === undefined) throw ticketNotFound(ticket, { status: 404 });
  found.status = "closed";
  return { id: ticket, status: "closed" };
});

desk.declareExtension({
  uri: INTAKE_URI,
  description: "What data/add takes.",
  params: { add: [{ part: "data", format: "json", load: "replace" }] },
});

/** The component's `agentenv:environment/env` export. */
export const env = desk.exports();
