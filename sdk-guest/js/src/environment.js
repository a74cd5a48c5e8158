/**
 * `Environment`: declares an environment's tools, extensions and data plane, and implements the
 * WIT `env` export from them.
 * @module
 */

import { DATA_OBJECTS_EXTENSION_URI, TransferError, grant } from "./transfers.js";
import { ToolContext } from "./context.js";
import { AgentEnvError, toWitError } from "./errors.js";
import { log } from "./log.js";
import { fromWitPart, toWitPart } from "./parts.js";
import { Shape, inputSchema, outputShape, typeMismatch } from "./schema.js";

/** MCP annotation keys, in the order of the WIT `tool-annotations` record. */
const ANNOTATION_KEYS = ["title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
/** The data-plane operations, in card order: WIT name and wire method. */
const OPERATIONS = [
  ["reset", "data/reset"],
  ["add", "data/add"],
  ["get", "data/get"],
];

/** A mistake in an environment's declaration, thrown when it is made (at build time). */
/** The declaration of an environment whose `data/get` takes a `write_namespace` grant. */
const DATA_OBJECTS_DECLARATION = Object.freeze({
  uri: DATA_OBJECTS_EXTENSION_URI,
  description: null,
  params: null,
  required: null,
  layout: "single",
  methods: [],
});

export class DefinitionError extends Error {
  constructor(message) {
    super(message);
    this.name = "DefinitionError";
  }
}

/**
 * A tool's answer that is sent as it is, content blocks, `isError` and `_meta` included: return
 * one from a tool to bypass the conversion of return values. A text block is `{type: "text",
 * text}`, an image `{type: "image", data: Uint8Array, mimeType}`; any other MCP content block
 * (audio, an embedded resource, a resource link, a block with annotations) is passed on as
 * its JSON object, with base64 `data`.
 */
export class ToolResult {
  /**
   * @param {Array<object>} content
   * @param {{structuredContent?: object|null, isError?: boolean, meta?: object|null}} [options]
   */
  constructor(content, { structuredContent = null, isError = false, meta = null } = {}) {
    this.content = content;
    this.structuredContent = structuredContent;
    this.isError = isError;
    this.meta = meta;
  }
}

/** One block of a verbatim ToolResult as the WIT `content-block`. */
function witBlock(b) {
  if (b.type === "image" && typeof b.data !== "string" && b.annotations == null && b._meta == null) {
    return { tag: "image", val: { data: b.data instanceof Uint8Array ? b.data : new Uint8Array(b.data), mimeType: b.mimeType } };
  }
  if (b.type === "text" && b.annotations == null && b._meta == null) return { tag: "text", val: String(b.text) };
  return { tag: "block", val: JSON.stringify(b) };
}

/** A return value as JSON (undefined is null), or `invalid_result` when it is not JSON. */
function toJson(value) {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value));
  } catch (error) {
    throw new AgentEnvError("invalid_result", `the result is not JSON: ${error.message}`);
  }
}

/** One text block: a string as it is, anything else as 2-space-indented JSON. */
function block(value) {
  return { tag: "text", val: typeof value === "string" ? value : JSON.stringify(value, null, 2) };
}

/**
 * The WIT `tool-result` of a successful call that returned `value`: no block for null, one block
 * per element for an array, otherwise one block; structured content by the tool's shape.
 */
function toolResult(value, shape) {
  if (value instanceof ToolResult) {
    return {
      content: value.content.map(witBlock),
      structuredContent: value.structuredContent == null ? null : JSON.stringify(value.structuredContent),
      isError: Boolean(value.isError),
      meta: value.meta == null ? null : JSON.stringify(value.meta),
    };
  }
  const json = toJson(value);
  const content = json === null ? [] : Array.isArray(json) ? json.map(block) : [block(json)];
  let structuredContent = null;
  if (shape === Shape.OBJECT) structuredContent = JSON.stringify(json);
  if (shape === Shape.WRAPPED) structuredContent = JSON.stringify({ result: json });
  return { content, structuredContent, isError: false, meta: null };
}

/** Logs an exception other than an AgentEnvError: a handler's bug, answered as a coded error. */
function logUnexpected(what, error) {
  if (error instanceof AgentEnvError) return;
  log.error(`${what} failed`, { error: String(error), stack: error instanceof Error ? String(error.stack) : null });
}

/** The handler's name, for schema titles and single-method extension routes. */
function handlerName(handler, fallback) {
  return handler.name || fallback;
}

/** Orders tools and extension methods by their handlers' names. */
function byId(a, b) {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Throws a DefinitionError unless `handler` is a function. */
function requireFunction(handler, what) {
  if (typeof handler !== "function") throw new DefinitionError(`${what}: the handler must be a function`);
}

/** The arguments with the schema's top-level defaults filled in where the caller left them out. */
function withDefaults(args, properties) {
  const filled = { ...args };
  for (const [key, schema] of Object.entries(properties)) {
    if (filled[key] === undefined && schema !== null && typeof schema === "object" && "default" in schema) {
      filled[key] = schema.default;
    }
  }
  return filled;
}

/**
 * An agent environment: declare its tools, extensions and data-plane handlers, then export
 * `environment.exports()` as `env` from the component's entry module.
 *
 * Handlers are synchronous: a component instance serves one episode, one call at a time, so
 * module-level variables are the episode's state.
 */
export class Environment {
  /** The tools by declared name: `{info, id, args, shape, handler}`. */
  #tools = new Map();
  /** The extensions in declaration order: `{info, methods: [{info, id, schema, handler}]}`. */
  #extensions = [];
  /** The data-plane handlers by operation (`reset`, `add`, `get`). */
  #handlers = {};
  /** The handler of MCP requests beyond tools, when one is set. */
  #mcp = null;
  /** Whether `data/get` takes a `write_namespace` grant. */
  #exports = false;
  /** The hook run before every tool, when one is set. */
  #onToolCall = null;
  /** The hook that edits the description, when one is set. */
  #served = null;

  /**
   * @param {{name: string, toolAccess?: boolean}} options the card's `name` (unless
   *   `ENVIRONMENT_NAME` overrides it), and `toolAccess` for per-role tool access enforced by the
   *   host (`/tools/disable`, `/tools/enable`)
   */
  constructor({ name, toolAccess = false }) {
    if (typeof name !== "string" || name === "") throw new DefinitionError("Environment: name must be a non-empty string");
    /** The card's name. */
    this.name = name;
    /** Whether the host enforces per-role tool access. */
    this.toolAccess = Boolean(toolAccess);
  }

  /**
   * Serves `data/reset` with `handler()`.
   * @param {() => void} handler
   */
  onReset(handler) {
    return this.#operation("reset", handler);
  }

  /**
   * Serves `data/add` with `handler(parts)`: load all of them or none (throw an AgentEnvError).
   * File parts arrive as `{bytes}`: the host fetched `file://` and `http(s)://` URIs.
   * @param {(parts: object[]) => void} handler
   */
  onAddData(handler) {
    return this.#operation("add", handler);
  }

  /**
   * Serves `data/get` with `handler()`, which answers an array of parts. With `writeNamespace`,
   * the environment declares `urn:agentenv:data-objects/v1` and `handler(writeNamespace)` is given
   * the caller's grant, or null (see `NamespaceUploader`; docs/protocol.md#exports).
   * @param {(writeNamespace?: object | null) => object[]} handler
   * @param {{writeNamespace?: boolean}} [options]
   */
  onGetData(handler, { writeNamespace = false } = {}) {
    this.#exports = Boolean(writeNamespace);
    return this.#operation("get", handler);
  }

  /** Registers the handler of a data-plane operation. */
  #operation(operation, handler) {
    requireFunction(handler, `data ${operation}`);
    if (this.#handlers[operation] !== undefined) throw new DefinitionError(`data ${operation}: already has a handler`);
    this.#handlers[operation] = handler;
    return this;
  }

  /**
   * Declares a tool; `handler(args, ctx)` receives the validated arguments (defaults filled in)
   * and the call's ToolContext, and answers a JSON value or a ToolResult.
   *
   * @param {object} spec
   * @param {string} spec.name the tool's name; `{environment_name}` in it is the card's name
   * @param {string} [spec.description] what the tool does (the model reads it)
   * @param {Record<string, object>} [spec.args] the argument schemas by name (see `s`); the input
   *   schema is titled `<handler name>Arguments`
   * @param {object} [spec.returns] the schema of the return value: an object schema is the
   *   output schema as it is, anything else is wrapped as `{"result": ...}`; without it the tool
   *   has no output schema and no structured content
   * @param {object} [spec.annotations] MCP annotations: title, readOnlyHint, destructiveHint,
   *   idempotentHint, openWorldHint
   * @param {object} [spec.meta] the tool's `_meta` object
   * @param {boolean} [spec.hiddenByDefault] hidden from every role until a tool-access rule
   *   names it
   * @param {(args: object, ctx: ToolContext) => unknown} handler
   */
  tool(spec, handler) {
    const { name, description = null, args = {}, returns, annotations = null, meta = null, hiddenByDefault = false } = spec;
    requireFunction(handler, `tool ${name}`);
    if (typeof name !== "string" || name === "") throw new DefinitionError("tool: name must be a non-empty string");
    if (this.#tools.has(name)) throw new DefinitionError(`tool ${name}: declared twice`);
    const unresolved = name.replaceAll("{environment_name}", "").match(/\{[^}]*\}/);
    if (unresolved) throw new DefinitionError(`tool ${name}: unknown placeholder ${unresolved[0]}`);
    if (annotations !== null) {
      const unknown = Object.keys(annotations).filter((k) => !ANNOTATION_KEYS.includes(k));
      if (unknown.length > 0) throw new DefinitionError(`tool ${name}: unknown annotations ${unknown.join(", ")}`);
    }
    const id = handlerName(handler, name.replaceAll("{environment_name}_", ""));
    const output = outputShape(returns, `${id}Output`);
    this.#tools.set(name, {
      info: {
        name,
        description,
        inputSchema: JSON.stringify(inputSchema(args, `${id}Arguments`)),
        outputSchema: output.schema === null ? null : JSON.stringify(output.schema),
        annotations: annotations === null ? null : Object.fromEntries(ANNOTATION_KEYS.map((k) => [k, annotations[k] ?? null])),
        meta: meta === null ? null : JSON.stringify(meta),
        hiddenByDefault: Boolean(hiddenByDefault),
      },
      id,
      args,
      shape: output.shape,
      handler,
    });
    return this;
  }

  /**
   * Declares an extension method; `handler(request, ctx)` receives the request object (its
   * required and unknown keys checked and its GET query strings coerced by the host, its types
   * checked against `request` here: a mismatch answers 400 `invalid_params`) and answers a JSON
   * value (null and undefined answer `{}`).
   *
   * Methods sharing a `uri` merge into one card entry. With `op`, each method has its own route
   * `/agentenv/ext/<slug>/<op>`; without it the extension has this one method, served at
   * `/agentenv/ext/<handler name>`.
   *
   * @param {object} spec
   * @param {string} spec.uri the extension's URI, e.g. `urn:example:slack-stats/v1`
   * @param {string} [spec.op] the method's name
   * @param {string} [spec.method] the HTTP verb (default POST); GET takes its request from the
   *   query string
   * @param {string} [spec.description] what the extension does (the first one given is kept)
   * @param {Record<string, object>} [spec.request] the request's property schemas (see `s`)
   * @param {string} [spec.path] an absolute route replacing the default one
   * @param {object} [spec.params] extension-level params (the first one given is kept)
   * @param {boolean} [spec.required] the card's `required` flag (the first one given is kept)
   * @param {(request: object, ctx: ToolContext) => unknown} handler
   */
  extension(spec, handler) {
    const { uri, op, method = "POST", description, request = {}, path = null, params, required } = spec;
    requireFunction(handler, `extension ${uri}`);
    const entry = this.#extensionEntry(uri, description, params, required, op === undefined ? "single" : "per-method");
    const name = op ?? handlerName(handler, "");
    if (name === "") throw new DefinitionError(`extension ${uri}: give an op or a named handler function`);
    if (entry.methods.some((m) => m.info.op === name)) throw new DefinitionError(`extension ${uri}: method ${name} declared twice`);
    if (entry.info.layout === "single" && entry.methods.length > 0) {
      throw new DefinitionError(`extension ${uri}: a handler without op must be the extension's only method`);
    }
    const schema = inputSchema(request, undefined);
    entry.methods.push({
      info: { op: name, httpMethod: method.toUpperCase(), requestSchema: JSON.stringify(schema), path },
      id: handlerName(handler, name),
      schema,
      handler,
    });
    return this;
  }

  /**
   * Sets the handler of MCP requests beyond tools (resources, templates, prompts, completions):
   * `handler(method, params)` answers the method's result object, or throws an AgentEnvError
   * `resource_not_found`, `invalid_params` or `method_not_found` (docs/protocol.md).
   * @param {(method: string, params: object) => object} handler
   */
  mcp(handler) {
    if (this.#mcp !== null) throw new DefinitionError("the MCP request handler is set already");
    this.#mcp = handler;
    return this;
  }

  /**
   * Runs `handler(ctx)` before every tool (the reference's `on_tool_call`): null or undefined lets
   * the call proceed, a ToolResult (`isError: true` for a refusal) answers it instead.
   * @param {(ctx: ToolContext) => ToolResult | null | undefined} handler
   */
  onToolCall(handler) {
    requireFunction(handler, "onToolCall");
    this.#onToolCall = handler;
    return this;
  }

  /**
   * Lets `handler(info)` edit what is served before the host reads it, and answer it (the
   * reference's `served_tools`, `served_extensions`, `served_operations`, `extension_params`):
   * `info` is the WIT `env-info`, `{name, tools, extensions, operations, toolAccess}`.
   * @param {(info: object) => object} handler
   */
  served(handler) {
    requireFunction(handler, "served");
    this.#served = handler;
    return this;
  }

  /**
   * Declares an extension with no route (card only), like `urn:agentenv:intake/v1`.
   * @param {{uri: string, description?: string, params?: object, required?: boolean}} spec
   */
  declareExtension({ uri, description, params, required }) {
    const entry = this.#extensionEntry(uri, description, params, required, "single");
    if (entry.methods.length > 0) throw new DefinitionError(`extension ${uri}: declared with methods already`);
    return this;
  }

  /** The card entry of extension `uri`, created on first use. */
  #extensionEntry(uri, description, params, required, layout) {
    if (typeof uri !== "string" || uri === "") throw new DefinitionError("extension: uri must be a non-empty string");
    let entry = this.#extensions.find((e) => e.info.uri === uri);
    if (entry === undefined) {
      entry = { info: { uri, description: null, params: null, required: null, layout }, methods: [] };
      this.#extensions.push(entry);
    } else if (entry.info.layout !== layout) {
      throw new DefinitionError(`extension ${uri}: a handler without op must be the extension's only method`);
    }
    if (entry.info.description === null && description !== undefined) entry.info.description = description;
    if (entry.info.params === null && params !== undefined) entry.info.params = JSON.stringify(params);
    if (entry.info.required === null && required !== undefined) entry.info.required = Boolean(required);
    return entry;
  }

  /**
   * The WIT `env-info`. Tools, and the methods of each extension, are listed in the order of their
   * handlers' names, as the reference SDK lists its methods; extensions in the order of their
   * first handler's name, then the declaration-only ones in declaration order.
   */
  describe() {
    const served = this.#extensions
      .filter((e) => e.methods.length > 0)
      .map((e) => ({ info: e.info, methods: [...e.methods].sort(byId) }))
      .sort((a, b) => byId(a.methods[0], b.methods[0]));
    const declared = this.#extensions.filter((e) => e.methods.length === 0);
    const info = {
      name: this.name,
      tools: [...this.#tools.values()].sort(byId).map((t) => t.info),
      extensions: [
        ...[...served, ...declared].map((e) => ({ ...e.info, methods: e.methods.map((m) => m.info) })),
        ...(this.#exports ? [DATA_OBJECTS_DECLARATION] : []),
      ],
      operations: OPERATIONS.map(([op]) => op).filter((op) => this.#handlers[op] !== undefined),
      toolAccess: this.toolAccess,
    };
    return this.#served === null ? info : this.#served(info);
  }

  /**
   * Runs a data-plane handler; throws the WIT error of its failure.
   * @param {string} operation
   * @param {unknown[]} args
   */
  #runOperation(operation, args) {
    const handler = this.#handlers[operation];
    if (handler === undefined) {
      const [, wire] = OPERATIONS.find(([op]) => op === operation);
      throw toWitError(new AgentEnvError("not_served", `${wire} is not served`));
    }
    try {
      return handler(...args);
    } catch (error) {
      if (error instanceof TransferError) {
        throw toWitError(new AgentEnvError(error.code, error.message, { retryable: error.retryable }));
      }
      logUnexpected(`data ${operation}`, error);
      // The reference answers the exception's message alone (`str(e)`), its type left out.
      const message = error instanceof Error ? error.message : String(error);
      throw toWitError(new AgentEnvError(`${operation}_failed`, message, { applied: "unknown", status: 500 }));
    }
  }

  /**
   * The WIT `env` interface of this environment: export it as `env` from the entry module,
   * `export const env = environment.exports();`.
   */
  exports() {
    return {
      describe: () => this.describe(),
      reset: () => {
        this.#runOperation("reset", []);
      },
      addData: (parts) => {
        let converted;
        try {
          converted = parts.map(fromWitPart);
        } catch (error) {
          throw toWitError(error, "invalid_data", 400);
        }
        this.#runOperation("add", [converted]);
      },
      getData: () => {
        const parts = this.#runOperation("get", this.#exports ? [grant()] : []);
        try {
          return parts.map(toWitPart);
        } catch (error) {
          throw toWitError(error, "invalid_part", 500);
        }
      },
      callTool: (name, argumentsJson) => this.callTool(name, argumentsJson),
      callExtension: (uri, op, requestJson) => this.callExtension(uri, op, requestJson),
      callMcp: (method, paramsJson) => {
        if (this.#mcp === null) throw toWitError(new AgentEnvError("method_not_found", `${method} is not served`));
        try {
          return JSON.stringify(toJson(this.#mcp(method, JSON.parse(paramsJson))));
        } catch (error) {
          logUnexpected(`MCP ${method}`, error);
          throw toWitError(error, "internal_error", 500);
        }
      },
    };
  }

  /** Calls tool `name` (as declared) with its JSON arguments; throws the WIT error of a failure. */
  callTool(name, argumentsJson) {
    const tool = this.#tools.get(name);
    if (tool === undefined) throw toWitError(new AgentEnvError("unknown_tool", `Unknown tool: ${name}`));
    try {
      const ctx = ToolContext.current();
      const answer = this.#onToolCall === null ? null : this.#onToolCall(ctx);
      if (answer !== null && answer !== undefined) {
        if (!(answer instanceof ToolResult)) throw new TypeError("onToolCall must answer null or a ToolResult");
        return toolResult(answer, tool.shape);
      }
      const args = withDefaults(JSON.parse(argumentsJson), tool.args);
      return toolResult(tool.handler(args, ctx), tool.shape);
    } catch (error) {
      if (error instanceof AgentEnvError) throw toWitError(error);
      logUnexpected(`tool ${name}`, error);
      // The reference's MCP server answers an exception as an error result naming the tool,
      // with the exception's message alone (`str(e)`), its type left out.
      const message = error instanceof Error ? error.message : String(error);
      const served = ToolContext.current().tool ?? name;
      return toolResult(new ToolResult([{ type: "text", text: `Error executing tool ${served}: ${message}` }], { isError: true }));
    }
  }

  /** Calls method `op` of extension `uri` with its JSON request; throws the WIT error of a failure. */
  callExtension(uri, op, requestJson) {
    const method = this.#extensions.find((e) => e.info.uri === uri)?.methods.find((m) => m.info.op === op);
    if (method === undefined) {
      throw toWitError(new AgentEnvError("not_found", `no extension method ${uri} ${op}`, { status: 404 }));
    }
    const request = JSON.parse(requestJson);
    const mismatch = typeMismatch(request, method.schema);
    if (mismatch !== null) throw toWitError(new AgentEnvError("invalid_params", mismatch));
    try {
      const answer = toJson(method.handler(request, ToolContext.current()));
      return answer === null ? "{}" : JSON.stringify(answer);
    } catch (error) {
      if (error instanceof AgentEnvError) throw toWitError(error);
      logUnexpected(`extension ${uri} ${op}`, error);
      const message = error instanceof Error ? error.message : String(error);
      throw toWitError(new AgentEnvError("extension_failed", message, { applied: "unknown", status: 500 }));
    }
  }
}
