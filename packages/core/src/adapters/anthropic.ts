import type { Anthropic } from "@anthropic-ai/sdk";
import type { AnyToolDefinition } from "../define-tool.js";
import { toolInputJSONSchema } from "../json-schema.js";
import { type RunToolCallOptions, runToolCall } from "../run-tool-call.js";

export type { RunToolCallOptions } from "../run-tool-call.js";

type Tool = Anthropic.Messages.Tool;
type ToolResultBlockParam = Anthropic.Messages.ToolResultBlockParam;
type ToolUseBlock = Anthropic.Messages.ToolUseBlock;

/** Pleach tools as Anthropic Messages API tool definitions (`name`, `description`, `input_schema`). */
export function toAnthropicTools(tools: readonly AnyToolDefinition[]): Tool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: toolInputJSONSchema(tool) as Anthropic.Messages.Tool.InputSchema,
  }));
}

/**
 * Run one `tool_use` block and answer it with the `tool_result` block to send back in the next
 * user message, `is_error` set when the tool failed. Never throws.
 */
export async function runAnthropicToolUse({
  tools,
  toolUse,
  context,
  maxChars,
}: {
  tools: readonly AnyToolDefinition[];
  toolUse: Pick<ToolUseBlock, "id" | "name" | "input">;
} & RunToolCallOptions): Promise<ToolResultBlockParam> {
  const result = await runToolCall({
    tools,
    name: toolUse.name,
    input: toolUse.input,
    context: { ...context, toolCallId: toolUse.id },
    maxChars,
  });
  return {
    type: "tool_result",
    tool_use_id: toolUse.id,
    content: result.output,
    is_error: result.error,
  };
}
