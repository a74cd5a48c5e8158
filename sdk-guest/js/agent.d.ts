/**
 * Types of @envhost/sdk/agent: write an agent in JavaScript or TypeScript, built into a
 * WebAssembly component (world `agentenv:agent/agent@0.1.0`) that envhost runs.
 */

import type { Json } from "./index.js";

export type { Json };

/** Whose turn it is: the caller's session id, and the extensions read when a session is created. */
export interface Scope {
  session: string;
  parentSession: string | null;
  branchHints: string[];
}

/** An image of the prompt: its MIME type and its bytes in base64. */
export interface ImageRef {
  mimeType: string;
  data: string;
}

/** What the caller asks. */
export interface Prompt {
  text: string;
  images: ImageRef[];
}

/** The non-terminal events of the Agent Handler spec, and extension events (any other type). */
export type ProgressEvent =
  | { type: "text"; delta: string }
  | { type: "thinking"; delta: string }
  | { type: "tool_started"; id: string; name: string; args: Json }
  | { type: "tool_ended"; id: string; isError: boolean; content: Json }
  | { type: "tool_progress"; id: string; text: string }
  | { type: "retrying"; attempt: number; maxAttempts: number; delayMs: number; reason: string }
  | { type: string; [key: string]: Json };

/** The terminal events: the first one yielded ends the turn. */
export type TerminalEvent =
  | { type: "completed"; data?: Json }
  | { type: "failed"; details: string; retryable: boolean; code?: string | null };

/** An event a turn yields. */
export type AgentEvent = ProgressEvent | TerminalEvent;

/** A tool call the model asked for; `args` is the JSON text it wrote (an object is accepted when sending). */
export interface ToolCall {
  id: string;
  name: string;
  args: string;
}

/** A message of the conversation. */
export interface Message {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** An assistant message's tool calls. */
  toolCalls?: Array<{ id: string; name: string; args: string | { [key: string]: Json } }>;
  /** The call a tool message answers. */
  toolCallId?: string | null;
}

/** A message of the session's history (every field present). */
export interface HistoryMessage extends Message {
  toolCalls: ToolCall[];
  toolCallId: string | null;
}

/** A tool the model may call. */
export interface ToolSpec {
  name: string;
  description: string;
  /** Its input JSON Schema (an object; JSON text is accepted when sending). */
  inputSchema: { [key: string]: Json } | string;
}

/** A completion request. */
export interface ModelRequest {
  messages: Message[];
  tools?: ToolSpec[];
  maxTokens?: number | null;
  temperature?: number | null;
}

/** A piece of the model's streamed answer; `text` and `thinking` chunks are events as they are. */
export type ModelChunk =
  | { type: "text"; delta: string }
  | { type: "thinking"; delta: string }
  | ({ type: "tool_call" } & ToolCall);

/** A tool's answer: whether it is an error, and its MCP content blocks. */
export interface ToolOutput {
  isError: boolean;
  content: Json[];
}

/** The brokered chat model. */
export interface Model {
  /** Starts a completion; its chunks are read with `for...of`. Throws a `ModelError`. */
  complete(request: ModelRequest): Generator<ModelChunk, void, undefined>;
}

/** The tools of the environment episode the agent is bound to. */
export interface Tools {
  /** The tools the episode offers the agent. */
  list(): ToolSpec[];
  /**
   * Calls a tool; the host emits `tool_started` and `tool_ended` with `id` around the call.
   * Throws a `ToolCallError` when the call could not be made.
   */
  call(id: string, name: string, args?: { [key: string]: Json } | string): ToolOutput;
}

/** The session's conversation, held by the host. */
export interface Session {
  /** Every message so far, oldest first. */
  history(): HistoryMessage[];
  /** Adds messages at the end. */
  append(messages: Message[]): void;
}

/** The host's brokers, a turn function's third argument. */
export interface AgentContext {
  model: Model;
  tools: Tools;
  session: Session;
}

/** What a turn returns: nothing, `{data}`, or a terminal event. */
export type TurnReturn = void | undefined | null | { data?: Json } | TerminalEvent;

/** A turn: a synchronous generator of events. */
export type TurnFunction = (scope: Scope, prompt: Prompt, cx: AgentContext) => Iterator<AgentEvent, TurnReturn, undefined>;

/** The WIT `handler` export. */
export interface HandlerExport {
  invoke(scope: Scope, prompt: Prompt): { data: string | null };
}

/**
 * The `handler` export of a turn function, `function* invoke(scope, prompt, cx)`: each event it
 * yields is emitted; the first terminal it yields (or its return) ends the turn; a thrown
 * `AgentFailure` is that failure, any other error `failed{code: "agent_error"}`. An `async`
 * function is refused: the component never runs promise reactions.
 */
export function defineAgent(invoke: TurnFunction): HandlerExport;

/** A failure the agent chooses: thrown, the turn ends `failed{details, retryable, code}`. */
export class AgentFailure extends Error {
  constructor(details: string, retryable?: boolean, code?: string | null);
  readonly details: string;
  readonly retryable: boolean;
  readonly code: string | null;
}

/**
 * Why the model could not answer; uncaught, the turn ends `rate_limited` or `model_unavailable`
 * (retryable), or `model_refused`.
 */
export class ModelError extends AgentFailure {
  constructor(kind: "rate-limited" | "unavailable" | "invalid-request", details: string, retryAfterMs?: number | null);
  /** The WIT `model-error` case. */
  readonly kind: "rate-limited" | "unavailable" | "invalid-request";
  /** When rate limited, the milliseconds to wait; else null. */
  readonly retryAfterMs: number | null;
}

/** A tool call the host could not make (an unknown tool, arguments that are not a JSON object). */
export class ToolCallError extends Error {}

/** The brokered chat model (also `cx.model`). */
export const model: Model;
/** The environment's tools (also `cx.tools`). */
export const tools: Tools;
/** The session (also `cx.session`). */
export const session: Session;
