import {
  type ModelAdapter,
  ModelError,
  type ModelMessage,
  type ModelResponse,
  type ModelToolCall,
} from "../model.js";
import { type FetchFunction, postJSON, type RetryOptions, withoutSchemaKey } from "./http.js";

/** Options of {@link createAnthropicModel}. */
export interface AnthropicModelOptions extends RetryOptions {
  /** The model, such as `claude-sonnet-4-5`. */
  model: string;
  apiKey: string;
  /**
   * The API's base URL (without `/v1`).
   * @default "https://api.anthropic.com"
   */
  baseURL?: string;
  /**
   * The most tokens per answer.
   * @default 4_096
   */
  maxTokens?: number;
  /**
   * The `anthropic-version` header.
   * @default "2023-06-01"
   */
  apiVersion?: string;
  /** @default globalThis.fetch */
  fetch?: FetchFunction;
  /**
   * The environment variable the key came from, named when it is refused.
   * @default "ANTHROPIC_API_KEY"
   */
  keyVariable?: string;
}

type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: boolean };

interface AnthropicMessage {
  content?: Array<{ type?: string; text?: string; id?: string; name?: string; input?: unknown }>;
  stop_reason?: string;
  usage?: { input_tokens?: number; output_tokens?: number };
}

/** A model behind the Anthropic Messages API over `fetch`. */
export function createAnthropicModel({
  model,
  apiKey,
  baseURL = "https://api.anthropic.com",
  maxTokens = 4_096,
  apiVersion = "2023-06-01",
  fetch = globalThis.fetch,
  keyVariable = "ANTHROPIC_API_KEY",
  maxRetries,
  initialBackoffMs,
}: AnthropicModelOptions): ModelAdapter {
  const url = `${baseURL.replace(/\/+$/, "")}/v1/messages`;
  return {
    name: `anthropic:${model}`,
    async generate({ system, messages, tools, abortSignal }): Promise<ModelResponse> {
      const body = {
        model,
        max_tokens: maxTokens,
        system,
        messages: toAnthropicMessages(messages),
        ...(tools.length === 0
          ? {}
          : {
              tools: tools.map((tool) => ({
                name: tool.name,
                description: tool.description,
                input_schema: withoutSchemaKey(tool.parameters),
              })),
            }),
      };
      const answer = (await postJSON({
        url,
        headers: { "x-api-key": apiKey, "anthropic-version": apiVersion },
        body,
        fetch,
        abortSignal,
        provider: "anthropic",
        model,
        keyVariable,
        maxRetries,
        initialBackoffMs,
      })) as AnthropicMessage;
      if (!Array.isArray(answer.content)) {
        throw new ModelError(
          "invalid-response",
          `anthropic answered without content: ${JSON.stringify(answer).slice(0, 200)}`,
        );
      }
      const texts: string[] = [];
      const toolCalls: ModelToolCall[] = [];
      for (const block of answer.content) {
        if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
        if (block.type === "tool_use") {
          toolCalls.push({ id: block.id ?? "", name: block.name ?? "", input: block.input ?? {} });
        }
      }
      return {
        text: texts.join("\n"),
        toolCalls,
        usage: {
          inputTokens: answer.usage?.input_tokens ?? 0,
          outputTokens: answer.usage?.output_tokens ?? 0,
        },
        ...(answer.stop_reason === undefined ? {} : { stopReason: answer.stop_reason }),
      };
    },
  };
}

/** Tool results go back as `tool_result` blocks of one user turn; turns must alternate. */
function toAnthropicMessages(
  messages: readonly ModelMessage[],
): Array<{ role: "user" | "assistant"; content: Block[] }> {
  const turns: Array<{ role: "user" | "assistant"; content: Block[] }> = [];
  const push = (role: "user" | "assistant", block: Block) => {
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(block);
    else turns.push({ role, content: [block] });
  };
  for (const message of messages) {
    switch (message.role) {
      case "user":
        push("user", { type: "text", text: message.content });
        break;
      case "assistant":
        if (message.content !== "") push("assistant", { type: "text", text: message.content });
        for (const call of message.toolCalls) {
          push("assistant", {
            type: "tool_use",
            id: call.id,
            name: call.name,
            input: call.inputError === undefined ? call.input : {},
          });
        }
        break;
      case "tool":
        push("user", {
          type: "tool_result",
          tool_use_id: message.toolCallId,
          content: message.content,
          ...(message.isError ? { is_error: true } : {}),
        });
        break;
    }
  }
  return turns;
}
