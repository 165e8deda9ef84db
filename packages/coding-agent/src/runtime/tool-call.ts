import {
  type AnyToolDefinition,
  renderToolResult,
  runToolCall,
  type ToolResult,
} from "@pleach/core";
import type { ModelMessage, ModelToolCall } from "./model.js";
import type { DeclaredRead, ReadMemory } from "./read-memory.js";
import { wrapToolOutput } from "./transcript.js";

/** The outcome of one tool call of the model. */
interface ModelToolCallOutcome {
  result: ToolResult;
  /** The result points at an earlier one (an unchanged re-read); the tool did not run. */
  cached: boolean;
  /** The read the call made, for the memory to remember once its result is in the transcript. */
  read?: DeclaredRead | undefined;
}

/**
 * Run one tool call of the model through core's `runToolCall`, unless the read memory can answer
 * it: a repeat of a read whose files are unchanged is answered by pointing at the earlier result.
 */
export async function runModelToolCall({
  call,
  tools,
  readMemory,
  abortSignal,
  maxResultChars,
}: {
  call: ModelToolCall;
  tools: readonly AnyToolDefinition[];
  /** `undefined` when the runtime keeps no file state. */
  readMemory: ReadMemory | undefined;
  abortSignal: AbortSignal | undefined;
  maxResultChars: number;
}): Promise<ModelToolCallOutcome> {
  const tool = tools.find((candidate) => candidate.name === call.name);
  const read =
    tool === undefined || call.inputError !== undefined
      ? undefined
      : readMemory?.readOf(tool, call.input);
  if (read !== undefined) {
    const step = await readMemory?.recall(read);
    if (step !== undefined) {
      const what = read.filePaths.length === 1 ? "this file" : "these files";
      return {
        result: {
          output: `[unchanged since your last ${call.name} of ${what} at step ${step}; its content is above]`,
          error: false,
        },
        cached: true,
      };
    }
  }
  const result = await runToolCall({
    tools,
    name: call.name,
    // Arguments that were not JSON are the text the model sent: parsing it again says why.
    ...(call.inputError === undefined ? { input: call.input } : { inputText: String(call.input) }),
    context: { abortSignal, toolCallId: call.id },
    maxChars: maxResultChars,
  });
  return { result, cached: false, read };
}

/** The transcript message of a call's result: capped, and delimited as data. */
export function toolMessage(
  call: ModelToolCall,
  result: ToolResult,
  maxChars: number,
): ModelMessage {
  const rendered = renderToolResult({ ok: true, result }, { maxChars });
  return {
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: wrapToolOutput({
      toolName: call.name,
      output: rendered.output,
      error: rendered.error,
      code: result.code,
    }),
    isError: rendered.error,
  };
}
