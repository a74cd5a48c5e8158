/**
 * Types of @envhost/sdk: write an agent environment in JavaScript or TypeScript, built into a
 * WebAssembly component (world `agentenv:environment/environment@0.1.0`) that envhost serves.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON Schema object. */
export type JsonSchema = { [keyword: string]: unknown };

/** Whether a failed call's effect happened (protocol.md#coded-errors). */
export type Applied = "yes" | "no" | "unknown";

/** Options of an AgentEnvError. */
export interface AgentEnvErrorOptions {
  /** Whether the caller may retry the same call (default false). */
  retryable?: boolean;
  /** Whether the call's effect happened (default "no"). */
  applied?: Applied;
  /** A hint for the caller. */
  hint?: string | null;
  /** The HTTP status of an extension answer (default 400). */
  status?: number;
}

/**
 * A coded error, the reference SDK's `AgentEnvError`: from a tool an `isError` result with the
 * text `"<code>: <message>"` and the structured content `{code, message, retryable, applied,
 * hint?}`; from an extension HTTP `status` with `{"ok": false, "error": {...}}`; from a data-plane
 * handler JSON-RPC error -32000.
 */
export class AgentEnvError extends Error {
  constructor(code: string, message: string, options?: AgentEnvErrorOptions);
  /** Machine-readable code, e.g. `channel_not_found`. */
  readonly code: string;
  /** Whether the caller may retry the same call. */
  readonly retryable: boolean;
  /** Whether the call's effect happened. */
  readonly applied: Applied;
  /** A hint for the caller, or null. */
  readonly hint: string | null;
  /** The HTTP status of an extension answer. */
  readonly status: number;
}

/** A mistake in an environment's declaration, thrown when it is made (at build time). */
export class DefinitionError extends Error {}

/** Who is calling (protocol.md#callers). */
export interface Caller {
  /** The caller's role: null for none, "" or "default". */
  readonly role: string | null;
  /** Tells callers of one role apart; null when unknown. */
  readonly session: string | null;
}

/** The caller and the call of a tool or extension call; empty outside one. */
export class ToolContext {
  /** Who is calling. */
  readonly caller: Caller;
  /** The tool's resolved name (for an extension, `<uri>#<op>`), or null outside a call. */
  readonly tool: string | null;
  /** The arguments object exactly as received (before defaults were applied). */
  readonly arguments: { [key: string]: Json };
  /** The call's identifier (32 lowercase hex digits), or null outside a call. */
  readonly callId: string | null;
  /** The context of the call being served, or an empty one outside any call. */
  static current(): ToolContext;
}

/** A data-plane text part. */
export interface TextPart {
  kind: "text";
  text: string;
  metadata?: { [key: string]: Json } | null;
}

/** A data-plane data part: a JSON object. */
export interface DataPart {
  kind: "data";
  data: { [key: string]: Json };
  metadata?: { [key: string]: Json } | null;
}

/** A data-plane file part: its bytes (always, in add-data) or a URI (in get-data answers). */
export interface FilePart {
  kind: "file";
  file: { bytes: Uint8Array } | { uri: string };
  mimeType?: string | null;
  name?: string | null;
  metadata?: { [key: string]: Json } | null;
}

/** A data-plane part (protocol.md#parts). */
export type Part = TextPart | DataPart | FilePart;

/** A text part. */
export function textPart(text: string, metadata?: { [key: string]: Json } | null): TextPart;
/** A data part holding `data`. */
export function dataPart(data: { [key: string]: Json }, metadata?: { [key: string]: Json } | null): DataPart;
/** A file part. */
export function filePart(
  file: { bytes: Uint8Array } | { uri: string },
  options?: { mimeType?: string | null; name?: string | null; metadata?: { [key: string]: Json } | null },
): FilePart;
/** Decodes UTF-8 bytes strictly (throws a TypeError on invalid UTF-8). */
export function decodeUtf8(bytes: Uint8Array): string;
/** Encodes a string as UTF-8 (a lone surrogate as U+FFFD, as TextEncoder does). */
export function encodeUtf8(text: string): Uint8Array;

/** A content block of a ToolResult. */
export type ContentBlock = { type: "text"; text: string } | { type: "image"; data: Uint8Array; mimeType: string };

/** A tool's answer sent as it is, image blocks and `isError` included. */
export class ToolResult {
  constructor(content: ContentBlock[], options?: { structuredContent?: { [key: string]: Json } | null; isError?: boolean });
  content: ContentBlock[];
  structuredContent: { [key: string]: Json } | null;
  isError: boolean;
}

/** MCP tool annotations. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** A tool's declaration. */
export interface ToolSpec {
  /** The tool's name; `{environment_name}` in it is replaced by the card's name. */
  name: string;
  /** What the tool does (the model reads it). */
  description?: string;
  /** The argument schemas by name (see `s`); required unless `s.optional`. */
  args?: { [name: string]: JsonSchema };
  /** The schema of the return value: objects as they are, anything else as `{"result": ...}`. */
  returns?: JsonSchema;
  /** MCP annotations. */
  annotations?: ToolAnnotations;
  /** The tool's `_meta` object. */
  meta?: { [key: string]: Json };
  /** Hidden from every role until a tool-access rule names it. */
  hiddenByDefault?: boolean;
}

/** An extension method's declaration. */
export interface ExtensionSpec {
  /** The extension's URI. */
  uri: string;
  /** The method's name; without it the extension has this one method, named after the handler. */
  op?: string;
  /** The HTTP verb (default POST). */
  method?: string;
  /** What the extension does (the first one given is kept). */
  description?: string;
  /** The request's property schemas (see `s`). */
  request?: { [name: string]: JsonSchema };
  /** An absolute route replacing the default one. */
  path?: string;
  /** Extension-level params (the first one given is kept). */
  params?: { [key: string]: Json };
  /** The card's `required` flag (the first one given is kept). */
  required?: boolean;
}

/** The WIT `env` export, as `Environment.exports()` implements it. */
export interface EnvExport {
  describe(): unknown;
  reset(): void;
  addData(parts: unknown[]): void;
  getData(): unknown[];
  callTool(name: string, argumentsJson: string): unknown;
  callExtension(uri: string, op: string, requestJson: string): string;
  callMcp(method: string, paramsJson: string): string;
}

/** An agent environment: declare its tools, extensions and data plane, then export `exports()` as `env`. */
export class Environment {
  constructor(options: { name: string; toolAccess?: boolean });
  /** The card's name. */
  readonly name: string;
  /** Whether the host enforces per-role tool access. */
  readonly toolAccess: boolean;
  /** Serves `data/reset`. */
  onReset(handler: () => void): this;
  /** Serves `data/add`: load every part or none (throw an AgentEnvError). */
  onAddData(handler: (parts: Part[]) => void): this;
  /** Serves `data/get`. */
  onGetData(handler: () => Part[]): this;
  /** Serves `data/get` taking the caller's `write_namespace` grant (null when it sent none), and
   * declares `urn:agentenv:data-objects/v1`. */
  onGetData(handler: (writeNamespace: WriteNamespaceGrant | null) => Part[], options: { writeNamespace: true }): this;
  /** Runs `handler(ctx)` before every tool: null lets the call proceed, a ToolResult answers it. */
  onToolCall(handler: (ctx: ToolContext) => ToolResult | null | undefined): this;
  /** Lets `handler(info)` edit the WIT `env-info` (tools, extensions, operations) before the host reads it. */
  served(handler: (info: any) => any): this;
  /** Declares a tool. */
  tool<A extends { [key: string]: any } = { [key: string]: any }>(
    spec: ToolSpec,
    handler: (args: A, ctx: ToolContext) => unknown,
  ): this;
  /** Declares an extension method. */
  extension<R extends { [key: string]: any } = { [key: string]: any }>(
    spec: ExtensionSpec,
    handler: (request: R, ctx: ToolContext) => unknown,
  ): this;
  /** Declares an extension with no route (card only). */
  declareExtension(spec: { uri: string; description?: string; params?: { [key: string]: Json }; required?: boolean }): this;
  /** Sets the handler of MCP requests beyond tools (resources, templates, prompts, completions). */
  mcp(handler: (method: string, params: { [key: string]: Json }) => Json): this;
  /** The WIT `env` interface: `export const env = environment.exports();`. */
  exports(): EnvExport;
}

/** A request to the calling client got no result. */
export class ClientError extends Error {
  /** The JSON-RPC error code: the client's, or -32601 (no client, or no such capability), -32001 (no answer in time). */
  code: number;
  /** The message. */
  reason: string;
}

/** Asks the client of the tool call being served (sampling, elicitation, roots). */
export const client: {
  request(method: string, params: { [key: string]: Json }): Json;
  sample(prompt: string, maxTokens: number): Json;
  elicit(message: string, schema: { [key: string]: Json }): Json;
};

/** Changes tool `name`'s description for this episode: its card entry and tools/list together. */
export function updateTool(name: string, description: string): void;

/** The caller's `write_namespace` grant as a guest sees it: its limits. */
export interface WriteNamespaceGrant {
  readonly maxObjects: number;
  readonly maxObjectBytes: number;
  readonly maxTotalBytes: number;
}

/** The URI an environment exporting through grants declares; the uploaded parts' metadata key. */
export const DATA_OBJECTS_EXTENSION_URI: "urn:agentenv:data-objects/v1";

/** A failed transfer, with the reference's code, HTTP status and message. */
export class TransferError extends Error {
  readonly code: string;
  readonly statusCode: number;
  readonly retryable: boolean;
  body(): { error: { code: string; message: string; retryable: boolean } };
}

/** Uploads objects under one namespace grant within its limits, one at a time. */
export class NamespaceUploader {
  constructor(target: WriteNamespaceGrant);
  /** Uploads or overwrites `relativePath` from bytes, a string (UTF-8) or chunks of either. */
  upload(
    relativePath: string,
    source: Uint8Array | string | Iterable<Uint8Array | string>,
  ): { sizeBytes: number; sha256: string };
}

/** The `data/get` part naming an object uploaded under the grant at `path`. */
export function uploadedFilePart(path: string, options?: { name?: string | null; mimeType?: string | null }): Part;

/** Reports the progress of the tool call being served (`done` out of `total`). */
export function progress(done: number, total?: number | null, message?: string | null): void;

/** Writes records into the host's log. */
export const log: {
  trace(message: string, fields?: { [key: string]: Json }): void;
  debug(message: string, fields?: { [key: string]: Json }): void;
  info(message: string, fields?: { [key: string]: Json }): void;
  warn(message: string, fields?: { [key: string]: Json }): void;
  error(message: string, fields?: { [key: string]: Json }): void;
};

/** JSON Schema helpers: each answers a plain JSON Schema object. */
export const s: {
  string(keywords?: JsonSchema): JsonSchema;
  integer(keywords?: JsonSchema): JsonSchema;
  number(keywords?: JsonSchema): JsonSchema;
  boolean(keywords?: JsonSchema): JsonSchema;
  array(items: JsonSchema, keywords?: JsonSchema): JsonSchema;
  /** An object schema: every property required unless marked with `s.optional`. */
  object(properties?: { [name: string]: JsonSchema }, keywords?: JsonSchema): JsonSchema;
  /** The schema, also allowing null. */
  nullable(schema: JsonSchema): JsonSchema;
  /** A property that may be left out, with its default (null unless given). */
  optional(schema: JsonSchema, defaultValue?: Json): JsonSchema;
  /** A shared definition, listed once under `$defs` and referenced with `$ref`. */
  named(name: string, schema: JsonSchema): JsonSchema;
};
