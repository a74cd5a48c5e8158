/**
 * The notebook of `../reference.py` (written for the reference Python SDK), ported by hand to the
 * JavaScript SDK; it answers clients exactly as the original does. It exercises an export through
 * a `write_namespace` grant (`onGetData` with `writeNamespace`, a `NamespaceUploader`,
 * `uploadedFilePart`s), file parts with inline bytes in `data/add`, a tool that changes another
 * tool's description while the episode runs (`updateTool`), a hook choosing the data-plane
 * operations, the extensions and the extension methods served (`served`), a verbatim `ToolResult`
 * with audio, optional parameters, and a coded error with a status and a hint.
 * @module
 */

import {
  AgentEnvError,
  Environment,
  NamespaceUploader,
  ToolResult,
  dataPart,
  decodeUtf8,
  s,
  updateTool,
  uploadedFilePart,
} from "@envhost/sdk";

const ARCHIVE_URI = "urn:example:notes-archive/v1";
const LABS_URI = "urn:example:notes-labs/v1";
/** A WAV header with no samples, base64: what a note sounds like. */
const SILENCE = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

/** The notes, in the order they were written: `{id, title, body, tags}`. */
let notes = [];

const Note = s.named(
  "Note",
  s.object({
    id: s.integer(),
    title: s.string(),
    body: s.string(),
    tags: s.array(s.string()),
  }),
);

function note(id, title, body, tags) {
  return { id, title, body, tags };
}

/** `object[key]`, or the error Python's `object[key]` raises when it is missing (KeyError `'key'`). */
function item(object, key) {
  if (!Object.hasOwn(object, key)) throw new Error(`'${key}'`);
  return object[key];
}

/** `object[key]`, or `fallback` when it is missing (Python's `object.get(key, fallback)`). */
function itemOr(object, key, fallback) {
  return Object.hasOwn(object, key) ? object[key] : fallback;
}

/** A JSON value as Python's `str` writes it: `None`, `True` and `False` for null and the booleans. */
function str(value) {
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  return String(value);
}

/** A list of strings as Python's `json.dumps` writes it: `", "` between items, non-ASCII escaped. */
function jsonDumps(strings) {
  const ascii = (text) =>
    JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `[${strings.map(ascii).join(", ")}]`;
}

const notebook = new Environment({ name: "notes" });

// ---------------------------------------------------------------- mount hooks

notebook.served((info) => ({
  ...info,
  operations: info.operations.filter((op) => op !== "reset"),
  extensions: info.extensions
    .filter((ext) => ext.uri !== LABS_URI)
    .map((ext) => ({ ...ext, methods: ext.methods.filter((m) => m.op !== "purge") })),
}));

// ---------------------------------------------------------------- data plane

notebook.onAddData(function add(parts) {
  const added = [...notes];
  for (const part of parts) {
    if (part.kind === "text") {
      added.push(note(added.length + 1, "text", part.text, []));
    } else if (part.kind === "data") {
      for (const n of itemOr(part.data, "notes", [])) {
        const title = str(item(n, "title"));
        const body = str(itemOr(n, "body", ""));
        added.push(note(added.length + 1, title, body, itemOr(n, "tags", []).map(str)));
      }
    } else if (part.kind === "file" && part.file.bytes !== undefined) {
      added.push(note(added.length + 1, part.name || "file", decodeUtf8(part.file.bytes), ["file"]));
    } else {
      throw new Error("notes load from text, data and inline file parts");
    }
  }
  notes = added;
});

notebook.onGetData(
  function get(writeNamespace) {
    if (writeNamespace === null) return [dataPart({ notes })];
    const uploader = new NamespaceUploader(writeNamespace);
    const parts = [];
    for (const n of notes) {
      const path = `notes/${n.id}.md`;
      uploader.upload(path, `# ${n.title}\n\n${n.body}\n`);
      parts.push(uploadedFilePart(path, { name: `${n.id}.md`, mimeType: "text/markdown" }));
    }
    uploader.upload("index.json", jsonDumps(notes.map((n) => n.title)));
    parts.push(uploadedFilePart("index.json", { mimeType: "application/json" }));
    return parts;
  },
  { writeNamespace: true },
);

// ---------------------------------------------------------------- tools

notebook.tool(
  {
    name: "{environment_name}_write",
    description: "Writes a note.",
    args: {
      title: s.string({ description: "The note's title." }),
      body: s.string(),
      tags: s.optional(s.nullable(s.array(s.string()))),
    },
    returns: Note,
  },
  function write({ title, body, tags }) {
    const written = note(notes.length + 1, title, body, tags ?? []);
    notes.push(written);
    return written;
  },
);

notebook.tool(
  {
    name: "{environment_name}_find",
    description: "Finds notes whose title or body holds the query.",
    args: {
      query: s.string(),
      limit: s.optional(s.nullable(s.integer())),
      tag: s.optional(s.nullable(s.string())),
    },
    returns: s.array(Note),
    annotations: { readOnlyHint: true },
  },
  function find({ query, limit, tag }) {
    const found = notes.filter(
      (n) =>
        `${n.title} ${n.body}`.toLowerCase().includes(query.toLowerCase()) && (tag === null || n.tags.includes(tag)),
    );
    return limit === null ? found : found.slice(0, limit);
  },
);

notebook.tool(
  { name: "{environment_name}_read_aloud", description: "Reads a note aloud.", args: { id: s.integer() } },
  function read_aloud({ id }) {
    const found = notes.find((n) => n.id === id);
    if (found === undefined) return new ToolResult([{ type: "text", text: `no note ${id}` }], { isError: true });
    return new ToolResult([
      { type: "text", text: found.title },
      { type: "audio", data: SILENCE, mimeType: "audio/wav" },
    ]);
  },
);

notebook.tool(
  {
    name: "{environment_name}_focus",
    description: "Points the find tool at a topic.",
    args: { topic: s.string() },
    returns: s.string(),
  },
  function focus({ topic }, ctx) {
    const find = `${ctx.tool.endsWith("_focus") ? ctx.tool.slice(0, -"_focus".length) : ctx.tool}_find`;
    updateTool(find, `Finds notes about ${topic}.`);
    return `${find} now looks for ${topic}`;
  },
);

// ---------------------------------------------------------------- extensions

notebook.extension(
  { uri: ARCHIVE_URI, op: "count", method: "GET", description: "The notebook's archive." },
  function count() {
    return { notes: notes.length };
  },
);

notebook.extension(
  { uri: ARCHIVE_URI, op: "tag", method: "POST", request: { id: s.integer(), tag: s.string() } },
  function tag({ id, tag }) {
    const found = notes.find((n) => n.id === id);
    if (found === undefined) {
      throw new AgentEnvError("note_not_found", `no note ${id}`, { status: 404, hint: "list them with data/get" });
    }
    found.tags.push(tag);
    return { id, tags: found.tags };
  },
);

notebook.extension({ uri: ARCHIVE_URI, op: "purge", method: "POST" }, function purge() {
  notes = [];
  return { notes: 0 };
});

notebook.extension({ uri: LABS_URI, op: "shuffle", method: "POST", description: "Not served." }, function shuffle() {
  notes.reverse();
  return { notes: notes.length };
});

/** The component's `agentenv:environment/env` export. */
export const env = notebook.exports();
