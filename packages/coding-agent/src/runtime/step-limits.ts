import { formatBytes, type ToolResult } from "@pleach/core";
import type { ModelToolCall } from "./model.js";

/** The caps on the tool calls of one model step (one response). */
export interface StepLimits {
  /** The most tool calls run per step; the rest are answered with an error. */
  maxToolCallsPerStep: number;
  /** The most bytes of one call's arguments (UTF-8 JSON). */
  maxToolCallInputBytes: number;
  /** The most bytes of all the arguments of a step's calls together. */
  maxStepInputBytes: number;
}

/** One call of a step as the runtime goes on with it. */
export interface LimitedToolCall {
  /** The call as the transcript keeps it: its arguments replaced by a placeholder when dropped. */
  call: ModelToolCall;
  /** Set when the call is not to be run: the error the model gets for it instead. */
  refusal?: ToolResult;
}

/**
 * Hold a step's tool calls to the {@link StepLimits}: calls past the count, a call whose
 * arguments are too large, and every call from the one that takes the step past its total are
 * not run, and each gets an error saying which cap, what was sent and what to do. Arguments over
 * a size cap are replaced by a short placeholder, so they are not sent back to the model on every
 * later step.
 */
export function limitStepToolCalls(
  calls: readonly ModelToolCall[],
  { maxToolCallsPerStep, maxToolCallInputBytes, maxStepInputBytes }: StepLimits,
): LimitedToolCall[] {
  const sizes = calls.map(inputBytes);
  const stepTotal = sizes.reduce((sum, size) => sum + size, 0);
  let kept = 0;
  let stepCapAt: number | undefined;
  return calls.map((call, index): LimitedToolCall => {
    const size = sizes[index] ?? 0;
    if (stepCapAt === undefined && size > maxToolCallInputBytes) {
      return {
        call: dropInput(
          call,
          `${formatBytes(size)}, over the limit of ${formatBytes(maxToolCallInputBytes)}`,
        ),
        refusal: refusal(
          `not run: the arguments of this call are ${formatBytes(size)}, over the limit of ${formatBytes(maxToolCallInputBytes)} for one tool call, and were dropped from the conversation. Send smaller calls: write large content in several parts (write_file a first part, then add the rest with further edit_file calls), each under the limit.`,
        ),
      };
    }
    if (stepCapAt === undefined && kept + size > maxStepInputBytes) stepCapAt = index;
    if (stepCapAt !== undefined) {
      return {
        call: dropInput(call, `the step's arguments went past ${formatBytes(maxStepInputBytes)}`),
        refusal: refusal(
          `not run: the arguments of the ${calls.length} tool calls of this step add up to ${formatBytes(stepTotal)}, over the limit of ${formatBytes(maxStepInputBytes)} per step, so this call and the ones after it (calls ${stepCapAt + 1} to ${calls.length}) were not run and their arguments were dropped. Send fewer or smaller calls per step, and write large content with several smaller edits.`,
        ),
      };
    }
    kept += size;
    if (index >= maxToolCallsPerStep) {
      return {
        call,
        refusal: refusal(
          `not run: this step sent ${calls.length} tool calls, and at most ${maxToolCallsPerStep} are run per step: calls ${maxToolCallsPerStep + 1} to ${calls.length} (this is call ${index + 1}) were not run. Send at most ${maxToolCallsPerStep} tool calls per step, and the ones still needed in the next step.`,
        ),
      };
    }
    return { call };
  });
}

function refusal(output: string): ToolResult {
  return { output, error: true, code: "TOO_LARGE" };
}

function dropInput(call: ModelToolCall, why: string): ModelToolCall {
  const { inputError: _inputError, ...rest } = call;
  return { ...rest, input: { dropped: `arguments dropped (${why}); this call was not run` } };
}

/** The size of a call's arguments as the model sent them: UTF-8 bytes of their JSON. */
function inputBytes(call: ModelToolCall): number {
  // Arguments that were not valid JSON are kept as the text the model sent.
  const text =
    call.inputError !== undefined && typeof call.input === "string"
      ? call.input
      : (JSON.stringify(call.input) ?? "");
  return Buffer.byteLength(text, "utf8");
}
