import type { OpenAI } from "openai";
import type { AnyToolDefinition } from "../define-tool.js";
import { toolInputJSONSchema } from "../json-schema.js";
import { type RunToolCallOptions, runToolCall } from "../run-tool-call.js";
import { toolStrictInputJSONSchema } from "../strict-schema.js";

export type { RunToolCallOptions } from "../run-tool-call.js";

type ChatCompletionFunctionTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;
type ChatCompletionMessageFunctionToolCall =
  OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
type ChatCompletionToolMessageParam = OpenAI.Chat.Completions.ChatCompletionToolMessageParam;
type FunctionTool = OpenAI.Responses.FunctionTool;
type ResponseFunctionToolCall = OpenAI.Responses.ResponseFunctionToolCall;
type FunctionCallOutput = OpenAI.Responses.ResponseInputItem.FunctionCallOutput;

/** Options of the OpenAI definition functions. */
export interface OpenAIToolOptions {
  /**
   * Offer strict-mode definitions (`strict: true`): every property required, optionals as
   * `null` unions, `additionalProperties: false`. Run the calls with the same setting, so the
   * `null`s are read as absent.
   * @default false
   */
  strict?: boolean;
}

function parametersOf(tool: AnyToolDefinition, strict: boolean): Record<string, unknown> {
  return strict ? toolStrictInputJSONSchema(tool) : toolInputJSONSchema(tool);
}

/** Pleach tools as Chat Completions function tools (`tools` of `chat.completions.create`). */
export function toOpenAIChatTools(
  tools: readonly AnyToolDefinition[],
  { strict = false }: OpenAIToolOptions = {},
): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: parametersOf(tool, strict),
      strict,
    },
  }));
}

/** Pleach tools as Responses API function tools (`tools` of `responses.create`). */
export function toOpenAIResponsesTools(
  tools: readonly AnyToolDefinition[],
  { strict = false }: OpenAIToolOptions = {},
): FunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: parametersOf(tool, strict),
    strict,
  }));
}

/**
 * Run one Chat Completions tool call and answer it with the `tool` message to append. Never
 * throws; a failure is a message the model can read (Chat Completions has no error flag).
 */
export async function runOpenAIChatToolCall({
  tools,
  toolCall,
  strict = false,
  context,
  maxChars,
}: {
  tools: readonly AnyToolDefinition[];
  toolCall: ChatCompletionMessageFunctionToolCall;
  /** @default false */
  strict?: boolean;
} & RunToolCallOptions): Promise<ChatCompletionToolMessageParam> {
  const result = await runToolCall({
    tools,
    name: toolCall.function.name,
    inputText: toolCall.function.arguments,
    strict,
    context: { ...context, toolCallId: toolCall.id },
    maxChars,
  });
  return { role: "tool", tool_call_id: toolCall.id, content: result.output };
}

/**
 * Run one Responses API `function_call` item and answer it with the `function_call_output`
 * input item to send back. Never throws; a failure is an output the model can read.
 */
export async function runOpenAIResponsesToolCall({
  tools,
  call,
  strict = false,
  context,
  maxChars,
}: {
  tools: readonly AnyToolDefinition[];
  call: ResponseFunctionToolCall;
  /** @default false */
  strict?: boolean;
} & RunToolCallOptions): Promise<FunctionCallOutput> {
  const result = await runToolCall({
    tools,
    name: call.name,
    inputText: call.arguments,
    strict,
    context: { ...context, toolCallId: call.call_id },
    maxChars,
  });
  return { type: "function_call_output", call_id: call.call_id, output: result.output };
}
