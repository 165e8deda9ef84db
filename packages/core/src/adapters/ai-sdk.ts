import { tool as aiTool, jsonSchema, type Tool } from "ai";
import type { AnyToolDefinition } from "../define-tool.js";
import { type JSONSchema, toolInputJSONSchema } from "../json-schema.js";
import { renderToolResult } from "../render.js";

/** Options of {@link toAISDKTool} and {@link toAISDKTools}. */
export interface ToAISDKToolOptions {
  /**
   * The most characters of a result the model sees.
   * @default 50_000
   */
  maxChars?: number;
}

/**
 * A pleach tool as an AI SDK 6 `tool()`. The input schema is the tool's JSON Schema with no
 * validator of the AI SDK's own, so the tool's validation (and its field-by-field
 * `INVALID_INPUT` message) is the one a model sees; a thrown {@link ToolError} becomes the AI
 * SDK's tool error with the model-readable message. `execute` resolves to the tool's structured
 * output; the model reads the tool's capped text rendering of it.
 */
export function toAISDKTool(
  tool: AnyToolDefinition,
  { maxChars }: ToAISDKToolOptions = {},
): Tool<unknown, unknown> {
  const schema: JSONSchema = toolInputJSONSchema(tool);
  return aiTool<unknown, unknown>({
    description: tool.description,
    ...(tool.annotations.title === undefined ? {} : { title: tool.annotations.title }),
    inputSchema: jsonSchema<unknown>(schema),
    execute: (input, { abortSignal, toolCallId }) =>
      tool.execute(input, { abortSignal, toolCallId }),
    toModelOutput: ({ output }) => {
      const rendered = renderToolResult(
        { ok: true, result: tool.toModelOutput(output) },
        { maxChars },
      );
      return { type: rendered.error ? "error-text" : "text", value: rendered.output };
    },
  });
}

/** Pleach tools as an AI SDK `ToolSet`, keyed by tool name, for `generateText({ tools })`. */
export function toAISDKTools(
  tools: readonly AnyToolDefinition[],
  options: ToAISDKToolOptions = {},
): Record<string, Tool<unknown, unknown>> {
  return Object.fromEntries(tools.map((tool) => [tool.name, toAISDKTool(tool, options)]));
}
