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
type ApplyPatchTool = OpenAI.Responses.ApplyPatchTool;
type FunctionShellTool = OpenAI.Responses.FunctionShellTool;
type ApplyPatchCall = Pick<OpenAI.Responses.ResponseApplyPatchToolCall, "call_id"> & {
  operation: OpenAI.Responses.ResponseApplyPatchToolCall["operation"] & { moveTo?: string };
};
type ApplyPatchCallOutput = OpenAI.Responses.ResponseInputItem.ApplyPatchCallOutput;
type ShellCall = Pick<OpenAI.Responses.ResponseFunctionShellToolCall, "call_id" | "action">;
type ShellCallOutput = OpenAI.Responses.ResponseInputItem.ShellCallOutput;
type ShellOutputChunk = OpenAI.Responses.ResponseFunctionShellCallOutputContent;

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

/** The pleach tool a Responses API `apply_patch_call` runs: its V4A diff goes to this engine. */
export const APPLY_PATCH_TOOL_NAME = "apply_diff";
/** The pleach tool a Responses API `shell_call` runs, once per command. */
export const SHELL_TOOL_NAME = "bash";

/**
 * The V4A patch (`*** Begin Patch` ... `*** End Patch`) of one `apply_patch_call` operation, as
 * pleach's `apply_diff` takes it: a `create_file` diff's lines are the file's (each with a `+`, or
 * taken as written without one), an `update_file` diff is the changes of one file (moved to
 * `moveTo`, which the Agents SDK's operations may carry).
 */
export function applyPatchOperationToV4A(operation: ApplyPatchCall["operation"]): string {
  const body = (() => {
    switch (operation.type) {
      case "create_file": {
        const lines = operation.diff.split("\n");
        if (lines.at(-1) === "") lines.pop();
        const added = lines.map((line) => (line.startsWith("+") ? line : `+${line}`));
        return [`*** Add File: ${operation.path}`, ...added];
      }
      case "update_file":
        return [
          `*** Update File: ${operation.path}`,
          ...(operation.moveTo === undefined ? [] : [`*** Move to: ${operation.moveTo}`]),
          operation.diff.replace(/\n$/, ""),
        ];
      case "delete_file":
        return [`*** Delete File: ${operation.path}`];
    }
  })();
  return ["*** Begin Patch", ...body, "*** End Patch", ""].join("\n");
}

/**
 * Run one Responses API `apply_patch_call` with pleach's `apply_diff` (exact or refused, never
 * misapplied) and answer it with the `apply_patch_call_output` to send back: `completed` with what
 * was changed, or `failed` with why and what to do. Never throws.
 */
export async function runOpenAIApplyPatchCall({
  tools,
  call,
  context,
  maxChars,
}: {
  tools: readonly AnyToolDefinition[];
  call: ApplyPatchCall;
} & RunToolCallOptions): Promise<ApplyPatchCallOutput> {
  const result = await runToolCall({
    tools,
    name: APPLY_PATCH_TOOL_NAME,
    input: { path: ".", diff: applyPatchOperationToV4A(call.operation) },
    context: { ...context, toolCallId: call.call_id },
    maxChars,
  });
  return {
    type: "apply_patch_call_output",
    call_id: call.call_id,
    status: result.error ? "failed" : "completed",
    output: result.output,
  };
}

/**
 * Run one Responses API `shell_call` with pleach's `bash`, its commands one after another, each
 * with the call's `timeout_ms`, and answer it with the `shell_call_output` to send back: per
 * command, `bash`'s text for the model (stdout and stderr merged as `bash` reports them, its notes
 * included) capped at `max_output_length` characters, and the exit code or the timeout. A command
 * `bash` refused reports its message as stderr with exit code 1. Never throws.
 */
export async function runOpenAIShellCall({
  tools,
  call,
  context,
  maxChars,
}: {
  tools: readonly AnyToolDefinition[];
  call: ShellCall;
} & RunToolCallOptions): Promise<ShellCallOutput> {
  const { commands, timeout_ms: timeout, max_output_length: maxLength } = call.action;
  const bash = tools.find((tool) => tool.name === SHELL_TOOL_NAME);
  const output: ShellOutputChunk[] = [];
  for (const command of commands) {
    // The structured result is kept beside the rendered text, for the exit code.
    let outcome: { exitCode?: number | null; timedOut?: boolean } | undefined;
    const capturing =
      bash === undefined
        ? []
        : [
            {
              ...bash,
              execute: async (input: unknown, executionContext: object) => {
                const result = await bash.execute(input, executionContext);
                outcome = result as typeof outcome;
                return result;
              },
            } as AnyToolDefinition,
          ];
    const result = await runToolCall({
      tools: capturing.length === 0 ? tools : capturing,
      name: SHELL_TOOL_NAME,
      input: { command, ...(timeout == null ? {} : { timeout }) },
      context: { ...context, toolCallId: call.call_id },
      maxChars: maxLength ?? maxChars,
    });
    if (outcome === undefined) {
      output.push({ stdout: "", stderr: result.output, outcome: { type: "exit", exit_code: 1 } });
    } else {
      output.push({
        stdout: result.output,
        stderr: "",
        outcome: outcome.timedOut
          ? { type: "timeout" }
          : { type: "exit", exit_code: outcome.exitCode ?? 1 },
      });
    }
  }
  return {
    type: "shell_call_output",
    call_id: call.call_id,
    output,
    ...(maxLength == null ? {} : { max_output_length: maxLength }),
  };
}

/**
 * Pleach tools for the Responses API with the model's built-in tool shapes, which models are
 * trained on: `apply_diff` offered as `{ type: "apply_patch" }` and `bash` as `{ type: "shell" }`
 * (run locally, through {@link runOpenAIApplyPatchCall} and {@link runOpenAIShellCall}); every
 * other tool as a function tool, as {@link toOpenAIResponsesTools} makes it.
 */
export function toOpenAIResponsesNativeTools(
  tools: readonly AnyToolDefinition[],
  options: OpenAIToolOptions = {},
): Array<FunctionTool | ApplyPatchTool | FunctionShellTool> {
  const native = (tool: AnyToolDefinition) =>
    tool.name === APPLY_PATCH_TOOL_NAME || tool.name === SHELL_TOOL_NAME;
  const functions = toOpenAIResponsesTools(
    tools.filter((tool) => !native(tool)),
    options,
  );
  const builtIn: Array<ApplyPatchTool | FunctionShellTool> = [];
  if (tools.some((tool) => tool.name === APPLY_PATCH_TOOL_NAME))
    builtIn.push({ type: "apply_patch" });
  if (tools.some((tool) => tool.name === SHELL_TOOL_NAME)) {
    builtIn.push({ type: "shell", environment: { type: "local" } });
  }
  return [...builtIn, ...functions];
}
