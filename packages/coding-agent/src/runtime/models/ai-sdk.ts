import {
  type ModelAdapter,
  ModelError,
  type ModelMessage,
  type ModelResponse,
  type ModelToolCall,
} from "../model.js";
import { parseArguments } from "./http.js";

/**
 * The part of the AI SDK's `LanguageModelV3` (ai@6) this adapter uses, written out here so the
 * runtime needs no `ai` package: any AI SDK provider's language model satisfies it.
 */
export interface AISDKLanguageModel {
  readonly specificationVersion: "v3";
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: {
    prompt: unknown[];
    tools?: unknown[];
    abortSignal?: AbortSignal;
  }): PromiseLike<{
    content: ReadonlyArray<{
      type: string;
      text?: string;
      toolCallId?: string;
      toolName?: string;
      input?: string;
    }>;
    finishReason?: { unified?: string; raw?: string } | string;
    usage?: {
      inputTokens?: { total?: number | undefined } | number | undefined;
      outputTokens?: { total?: number | undefined } | number | undefined;
    };
  }>;
}

/** Options of {@link createAISDKModel}. */
export interface AISDKModelOptions {
  /** A language model of any AI SDK provider (`openai("gpt-4.1")`, `anthropic(...)`, ...). */
  model: AISDKLanguageModel;
}

/**
 * Any AI SDK language model as a {@link ModelAdapter}, called through its `doGenerate` with the
 * AI SDK's own prompt format. The `ai` package is an optional peer: nothing is imported from it.
 */
export function createAISDKModel({ model }: AISDKModelOptions): ModelAdapter {
  return {
    name: `${model.provider}:${model.modelId}`,
    async generate({ system, messages, tools, abortSignal }): Promise<ModelResponse> {
      let result: Awaited<ReturnType<AISDKLanguageModel["doGenerate"]>>;
      try {
        result = await model.doGenerate({
          prompt: [{ role: "system", content: system }, ...messages.map(toPromptMessage)],
          tools: tools.map((tool) => ({
            type: "function",
            name: tool.name,
            description: tool.description,
            inputSchema: tool.parameters,
          })),
          ...(abortSignal === undefined ? {} : { abortSignal }),
        });
      } catch (error) {
        if (abortSignal?.aborted) throw new ModelError("aborted", "the model call was aborted");
        const status = (error as { statusCode?: number }).statusCode;
        const kind =
          status === 401 || status === 403
            ? "authentication"
            : status === 404
              ? "unknown-model"
              : status === 429
                ? "rate-limited"
                : status !== undefined && status >= 500
                  ? "server"
                  : "network";
        throw new ModelError(
          kind,
          `${model.provider}:${model.modelId} failed: ${(error as Error).message}`,
          {
            cause: error,
            ...(status === undefined ? {} : { status }),
          },
        );
      }
      const texts: string[] = [];
      const toolCalls: ModelToolCall[] = [];
      for (const part of result.content) {
        if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
        if (part.type === "tool-call") {
          toolCalls.push({
            id: part.toolCallId ?? `call_${toolCalls.length}`,
            name: part.toolName ?? "",
            ...parseArguments(part.input ?? ""),
          });
        }
      }
      const finish = result.finishReason;
      const stopReason = typeof finish === "string" ? finish : (finish?.unified ?? undefined);
      return {
        text: texts.join(""),
        toolCalls,
        usage: {
          inputTokens: tokenCount(result.usage?.inputTokens),
          outputTokens: tokenCount(result.usage?.outputTokens),
        },
        ...(stopReason === undefined ? {} : { stopReason }),
      };
    },
  };
}

function tokenCount(value: { total?: number | undefined } | number | undefined): number {
  if (typeof value === "number") return value;
  return value?.total ?? 0;
}

function toPromptMessage(message: ModelMessage): Record<string, unknown> {
  switch (message.role) {
    case "user":
      return { role: "user", content: [{ type: "text", text: message.content }] };
    case "assistant":
      return {
        role: "assistant",
        content: [
          ...(message.content === "" ? [] : [{ type: "text", text: message.content }]),
          ...message.toolCalls.map((call) => ({
            type: "tool-call",
            toolCallId: call.id,
            toolName: call.name,
            input: call.inputError === undefined ? call.input : {},
          })),
        ],
      };
    case "tool":
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.toolCallId,
            toolName: message.toolName,
            output: { type: message.isError ? "error-text" : "text", value: message.content },
          },
        ],
      };
  }
}
