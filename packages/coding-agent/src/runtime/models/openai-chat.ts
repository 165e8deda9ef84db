import type { ModelAdapter, ModelMessage, ModelResponse, ModelToolCall } from "../model.js";
import {
  endpoint,
  type FetchFunction,
  invalidResponse,
  modelResponse,
  parseArguments,
  postJSON,
  type RetryOptions,
  withoutSchemaKey,
} from "./http.js";

/** Options of {@link createOpenAIChatModel}. */
export interface OpenAIChatModelOptions extends RetryOptions {
  /** The model, such as `gpt-4.1` (or whatever name a local server gives its model). */
  model: string;
  /** The API key; local servers often need none. */
  apiKey?: string;
  /**
   * The API's base URL, up to and including `/v1`.
   * @default "https://api.openai.com/v1"
   */
  baseURL?: string;
  /**
   * The most tokens per answer.
   * @default 4_096
   */
  maxTokens?: number;
  /** Extra headers (an organization, a proxy's auth). */
  headers?: Record<string, string>;
  /** @default globalThis.fetch */
  fetch?: FetchFunction;
  /**
   * The environment variable the key came from, named when it is refused.
   * @default "OPENAI_API_KEY"
   */
  keyVariable?: string;
}

interface ChatCompletion {
  choices?: Array<{
    message?: {
      content?: string | null;
      tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/**
 * A model behind the OpenAI Chat Completions API over `fetch`: OpenAI itself, and the local
 * servers that speak it (llama.cpp, vLLM, Ollama, LM Studio).
 */
export function createOpenAIChatModel({
  model,
  apiKey,
  baseURL = "https://api.openai.com/v1",
  maxTokens = 4_096,
  headers = {},
  fetch = globalThis.fetch,
  keyVariable = "OPENAI_API_KEY",
  maxRetries,
  initialBackoffMs,
}: OpenAIChatModelOptions): ModelAdapter {
  const url = endpoint(baseURL, "/chat/completions");
  return {
    name: `openai:${model}`,
    async generate({ system, messages, tools, abortSignal }): Promise<ModelResponse> {
      const body = {
        model,
        max_tokens: maxTokens,
        messages: [{ role: "system", content: system }, ...messages.map(toOpenAIMessage)],
        ...(tools.length === 0
          ? {}
          : {
              tools: tools.map((tool) => ({
                type: "function",
                function: {
                  name: tool.name,
                  description: tool.description,
                  parameters: withoutSchemaKey(tool.parameters),
                },
              })),
            }),
      };
      const answer = (await postJSON({
        url,
        headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers },
        body,
        fetch,
        abortSignal,
        provider: "openai",
        model,
        keyVariable,
        maxRetries,
        initialBackoffMs,
      })) as ChatCompletion;
      const choice = answer.choices?.[0];
      if (choice?.message === undefined) {
        throw invalidResponse("openai", "a message", answer);
      }
      const toolCalls: ModelToolCall[] = (choice.message.tool_calls ?? []).map((call, index) => ({
        id: call.id ?? `call_${index}`,
        name: call.function?.name ?? "",
        ...parseArguments(call.function?.arguments ?? ""),
      }));
      return modelResponse(
        choice.message.content ?? "",
        toolCalls,
        { input: answer.usage?.prompt_tokens, output: answer.usage?.completion_tokens },
        choice.finish_reason,
      );
    },
  };
}

function toOpenAIMessage(message: ModelMessage): Record<string, unknown> {
  switch (message.role) {
    case "user":
      return { role: "user", content: message.content };
    case "assistant":
      return {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        ...(message.toolCalls.length === 0
          ? {}
          : {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: "function",
                function: {
                  name: call.name,
                  arguments:
                    call.inputError === undefined ? JSON.stringify(call.input) : String(call.input),
                },
              })),
            }),
      };
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}
