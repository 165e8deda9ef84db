import { applyPatchOperationToV4A } from "@pleach/core/openai";
import type {
  ModelAdapter,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
} from "../model.js";
import {
  endpoint,
  invalidResponse,
  modelResponse,
  parseArguments,
  postJSON,
  withoutSchemaKey,
} from "./http.js";
import type { OpenAIChatModelOptions } from "./openai-chat.js";

/**
 * Options of {@link createOpenAIResponsesModel}: those of the Chat Completions model
 * (`maxTokens` is sent as `max_output_tokens`), and the native tool shapes.
 */
export interface OpenAIResponsesModelOptions extends OpenAIChatModelOptions {
  /**
   * Offer the model its own tool shapes: `apply_diff` as `{ type: "apply_patch" }` (each
   * operation becomes one V4A patch for `apply_diff`) and `bash` as `{ type: "shell" }` (a call's
   * commands run one after another in one `bash` call). Other tools stay function tools.
   * @default false
   */
  nativeTools?: boolean;
}

interface OutputItem {
  type?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  content?: Array<{ type?: string; text?: string }>;
  operation?: Parameters<typeof applyPatchOperationToV4A>[0];
  action?: { commands?: string[]; timeout_ms?: number | null };
}

interface ResponsesAnswer {
  output?: OutputItem[];
  status?: string;
  usage?: { input_tokens?: number; output_tokens?: number };
}

/**
 * A model behind the OpenAI Responses API over `fetch`. With `nativeTools`, the calls of the
 * built-in `apply_patch` and `shell` tools run as `apply_diff` and `bash` calls, and their results
 * go back as `apply_patch_call_output` and `shell_call_output` items.
 */
export function createOpenAIResponsesModel({
  model,
  apiKey,
  baseURL = "https://api.openai.com/v1",
  maxTokens = 4_096,
  headers = {},
  fetch = globalThis.fetch,
  keyVariable = "OPENAI_API_KEY",
  maxRetries,
  initialBackoffMs,
  nativeTools = false,
}: OpenAIResponsesModelOptions): ModelAdapter {
  const url = endpoint(baseURL, "/responses");
  // The built-in calls as the model sent them, by call id, to echo them back with their results.
  const nativeCalls = new Map<string, OutputItem>();
  return {
    name: `openai-responses:${model}`,
    async generate({ system, messages, tools, abortSignal }): Promise<ModelResponse> {
      const body = {
        model,
        instructions: system,
        max_output_tokens: maxTokens,
        input: messages.flatMap((message) => toInputItems(message, nativeCalls)),
        ...(tools.length === 0 ? {} : { tools: declarations(tools, nativeTools) }),
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
      })) as ResponsesAnswer;
      if (!Array.isArray(answer.output)) {
        throw invalidResponse("openai", "output", answer);
      }
      const texts: string[] = [];
      const toolCalls: ModelToolCall[] = [];
      for (const item of answer.output) {
        const id = item.call_id ?? `call_${toolCalls.length}`;
        if (item.type === "message") {
          for (const part of item.content ?? []) {
            if (part.type === "output_text" && typeof part.text === "string") texts.push(part.text);
          }
        } else if (item.type === "function_call") {
          toolCalls.push({ id, name: item.name ?? "", ...parseArguments(item.arguments ?? "") });
        } else if (item.type === "apply_patch_call" && item.operation !== undefined) {
          nativeCalls.set(id, item);
          const diff = applyPatchOperationToV4A(item.operation);
          toolCalls.push({ id, name: "apply_diff", input: { path: ".", diff } });
        } else if (item.type === "shell_call") {
          nativeCalls.set(id, item);
          const { commands = [], timeout_ms: timeout } = item.action ?? {};
          const input = { command: commands.join("\n"), ...(timeout == null ? {} : { timeout }) };
          toolCalls.push({ id, name: "bash", input });
        }
      }
      return modelResponse(
        texts.join("\n"),
        toolCalls,
        { input: answer.usage?.input_tokens, output: answer.usage?.output_tokens },
        answer.status,
      );
    },
  };
}

function declarations(tools: ModelRequest["tools"], native: boolean): unknown[] {
  return tools.map((tool) => {
    if (native && tool.name === "apply_diff") return { type: "apply_patch" };
    if (native && tool.name === "bash") return { type: "shell", environment: { type: "local" } };
    return {
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: withoutSchemaKey(tool.parameters),
      strict: false,
    };
  });
}

function toInputItems(message: ModelMessage, nativeCalls: ReadonlyMap<string, OutputItem>) {
  switch (message.role) {
    case "user":
      return [{ role: "user", content: message.content }];
    case "assistant":
      return [
        ...(message.content === "" ? [] : [{ role: "assistant", content: message.content }]),
        ...message.toolCalls.map(
          (call) =>
            nativeCalls.get(call.id) ?? {
              type: "function_call",
              call_id: call.id,
              name: call.name,
              arguments:
                call.inputError === undefined ? JSON.stringify(call.input) : String(call.input),
            },
        ),
      ];
    case "tool": {
      const native = nativeCalls.get(message.toolCallId);
      if (native?.type === "apply_patch_call") {
        const status = message.isError ? "failed" : "completed";
        return [
          {
            type: "apply_patch_call_output",
            call_id: message.toolCallId,
            status,
            output: message.content,
          },
        ];
      }
      if (native?.type === "shell_call") {
        return [
          {
            type: "shell_call_output",
            call_id: message.toolCallId,
            output: [{ stdout: message.content, stderr: "", outcome: shellOutcome(message) }],
          },
        ];
      }
      return [
        { type: "function_call_output", call_id: message.toolCallId, output: message.content },
      ];
    }
  }
}

/** The outcome `bash`'s text tells: its `[exit N]` note, a timeout, or 0 for a success. */
function shellOutcome({ content, isError }: { content: string; isError: boolean }) {
  if (!isError) return { type: "exit", exit_code: 0 };
  const exits = [...content.matchAll(/\[exit (\d+)\]/g)];
  const last = exits.at(-1)?.[1];
  if (last !== undefined) return { type: "exit", exit_code: Number(last) };
  return /timed out/i.test(content) ? { type: "timeout" } : { type: "exit", exit_code: 1 };
}
