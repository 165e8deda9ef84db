import type { ToolResult } from "./define-tool.js";
import { isToolError } from "./errors.js";
import { capText, MODEL_OUTPUT_LIMIT } from "./truncate.js";

/** Options of {@link renderToolResult}. */
export interface RenderToolResultOptions {
  /**
   * The most characters of output a model sees.
   * @default 50_000
   */
  maxChars?: number;
  /**
   * The call's abort signal: a failure other than a {@link ToolError} while it is aborted reads
   * as `aborted` (code `ABORTED`), not as an internal error.
   */
  abortSignal?: AbortSignal;
}

/** What {@link renderToolResult} takes: a tool's raw result, or the error it threw. */
export type ToolOutcome = { ok: true; result: ToolResult } | { ok: false; error: unknown };

/**
 * Turn a tool's outcome into the `{ output, error }` a model reads, capped at 50,000 characters with the
 * head and tail kept. A {@link ToolError} renders as its message and code; any other thrown value
 * renders as an internal error, so a model always gets something it can read.
 */
export function renderToolResult(
  outcome: ToolOutcome,
  { maxChars = MODEL_OUTPUT_LIMIT, abortSignal }: RenderToolResultOptions = {},
): ToolResult {
  if (outcome.ok) {
    const { output, error, code } = outcome.result;
    const capped = capText(output, { maxChars }).text;
    return code === undefined ? { output: capped, error } : { output: capped, error, code };
  }
  const { error } = outcome;
  if (isToolError(error)) {
    return { output: capText(error.message, { maxChars }).text, error: true, code: error.code };
  }
  if (abortSignal?.aborted) return { output: "aborted", error: true, code: "ABORTED" };
  const message = error instanceof Error ? error.message : String(error);
  return {
    output: capText(`internal error: ${message}`, { maxChars }).text,
    error: true,
    code: "INTERNAL",
  };
}
