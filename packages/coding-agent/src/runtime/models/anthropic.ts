import { createAnthropicTextEditorTool, TEXT_EDITOR_NAME } from "@pleach/core/anthropic";
import type {
  ModelAdapter,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
} from "../model.js";
import {
  endpoint,
  type FetchFunction,
  invalidResponse,
  modelResponse,
  postJSON,
  type RetryOptions,
  withoutSchemaKey,
} from "./http.js";

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
  /**
   * Offer Claude its own tool shapes: `bash` as `bash_20250124`, and the file tools (`read_file`,
   * `list_files`, `write_file`, `edit_file`) as the text editor `text_editor_20250728`, which the
   * runtime adds to a session's tools (see `@pleach/core/anthropic`'s
   * `createAnthropicTextEditorTool`). Other tools stay custom tools.
   * @default false
   */
  nativeTools?: boolean;
}

/** The tools the text editor runs, offered through it instead when it is there. */
const EDITOR_COVERS = ["read_file", "list_files", "write_file", "edit_file"];

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
  nativeTools = false,
}: AnthropicModelOptions): ModelAdapter {
  const url = endpoint(baseURL, "/v1/messages");
  return {
    name: `anthropic:${model}`,
    ...(nativeTools
      ? {
          extraTools: (tools) =>
            EDITOR_COVERS.every((name) => tools.some((tool) => tool.name === name))
              ? [createAnthropicTextEditorTool(tools)]
              : [],
        }
      : {}),
    async generate({ system, messages, tools, abortSignal }): Promise<ModelResponse> {
      const body = {
        model,
        max_tokens: maxTokens,
        system,
        messages: toAnthropicMessages(messages),
        ...(tools.length === 0
          ? {}
          : {
              tools: declarations(tools, nativeTools),
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
        throw invalidResponse("anthropic", "content", answer);
      }
      const texts: string[] = [];
      const toolCalls: ModelToolCall[] = [];
      for (const block of answer.content) {
        if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
        if (block.type === "tool_use") {
          toolCalls.push({ id: block.id ?? "", name: block.name ?? "", input: block.input ?? {} });
        }
      }
      return modelResponse(
        texts.join("\n"),
        toolCalls,
        { input: answer.usage?.input_tokens, output: answer.usage?.output_tokens },
        answer.stop_reason,
      );
    },
  };
}

/** The request's tool declarations: custom tools, or with `native`, Claude's own shapes. */
function declarations(tools: ModelRequest["tools"], native: boolean): unknown[] {
  const editor = native && tools.some((tool) => tool.name === TEXT_EDITOR_NAME);
  return tools.flatMap((tool): unknown[] => {
    if (native && tool.name === "bash") return [{ type: "bash_20250124", name: "bash" }];
    if (editor && tool.name === TEXT_EDITOR_NAME) {
      return [{ type: "text_editor_20250728", name: TEXT_EDITOR_NAME }];
    }
    if (editor && EDITOR_COVERS.includes(tool.name)) return [];
    return [
      {
        name: tool.name,
        description: tool.description,
        input_schema: withoutSchemaKey(tool.parameters),
      },
    ];
  });
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
