import type { AnyToolDefinition, JSONSchema } from "@pleach/core";

/** A tool as a model is offered it: a name, a description and JSON Schema parameters. */
export interface ModelToolDefinition {
  name: string;
  description: string;
  parameters: JSONSchema;
}

/** A tool call the model asked for. */
export interface ModelToolCall {
  /** The provider's id of the call, echoed back with its result. */
  id: string;
  name: string;
  /** The arguments, parsed from JSON. */
  input: unknown;
  /**
   * Set when the model's arguments were not valid JSON: what the parser said. `input` is then
   * the text the model sent.
   */
  inputError?: string;
}

/** Tokens a model call used, as the provider reported them. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
}

/** One message of the conversation, in a provider-neutral form the adapters translate. */
export type ModelMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls: ModelToolCall[] }
  | {
      role: "tool";
      toolCallId: string;
      toolName: string;
      /** The result as the model reads it (delimited as data, see the runtime). */
      content: string;
      isError: boolean;
    };

/** What a model is asked. */
export interface ModelRequest {
  system: string;
  messages: readonly ModelMessage[];
  tools: readonly ModelToolDefinition[];
  abortSignal?: AbortSignal;
}

/** What a model answered: text, tool calls, or both. */
export interface ModelResponse {
  text: string;
  toolCalls: ModelToolCall[];
  usage?: ModelUsage;
  /** The provider's stop reason, as it named it (`tool_calls`, `end_turn`, ...). */
  stopReason?: string;
}

/**
 * A language model behind any provider: messages and tool definitions in, assistant text, tool
 * calls and usage out. The runtime talks only to this.
 */
export interface ModelAdapter {
  /** `provider:model`, for logs and results. */
  readonly name: string;
  generate(request: ModelRequest): Promise<ModelResponse>;
  /**
   * Tools the model's own tool shapes need beside a session's, made over them (Anthropic's text
   * editor over the file tools, for a model with `nativeTools`). The runtime adds them.
   */
  extraTools?(tools: readonly AnyToolDefinition[]): readonly AnyToolDefinition[];
}

/** Why a model call failed, so callers can tell a bad key from a busy server. */
export type ModelErrorKind =
  | "authentication"
  | "unknown-model"
  | "rate-limited"
  | "server"
  | "bad-request"
  | "network"
  | "aborted"
  | "invalid-response";

/** Options of {@link ModelError}. */
export interface ModelErrorOptions {
  /** The HTTP status, when there was a response. */
  status?: number;
  cause?: unknown;
}

/** A model call that failed; `kind` says how, the message says what to do. */
export class ModelError extends Error {
  override readonly name = "ModelError";
  readonly kind: ModelErrorKind;
  readonly status: number | undefined;
  constructor(kind: ModelErrorKind, message: string, { status, cause }: ModelErrorOptions = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.kind = kind;
    this.status = status;
  }
}
