import type { AnyToolDefinition } from "../define-tool.js";
import { renderToolResult } from "../render.js";

/**
 * A tool's output as the AI SDK's (and Mastra's) text tool result: the capped text every face of
 * pleach shows a model, as `error-text` when the tool's rendering reports a failure.
 */
export function textToolOutput(
  tool: AnyToolDefinition,
  output: unknown,
  maxChars?: number,
): { type: "text" | "error-text"; value: string } {
  const rendered = renderToolResult({ ok: true, result: tool.toModelOutput(output) }, { maxChars });
  return { type: rendered.error ? "error-text" : "text", value: rendered.output };
}
