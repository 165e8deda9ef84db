import type { Anthropic } from "@anthropic-ai/sdk";
import type { AnyToolDefinition, ToolResult } from "../define-tool.js";
import { toolInputJSONSchema } from "../json-schema.js";
import { type RunToolCallOptions, runToolCall } from "../run-tool-call.js";
import {
  type AnthropicTextEditorInput,
  runAnthropicTextEditor,
  TEXT_EDITOR_TOOL_NAMES,
} from "./anthropic-text-editor.js";

export type { RunToolCallOptions } from "../run-tool-call.js";
export type { AnthropicTextEditorInput } from "./anthropic-text-editor.js";
export { createAnthropicTextEditorTool, runAnthropicTextEditor } from "./anthropic-text-editor.js";

type Tool = Anthropic.Messages.Tool;
type ToolResultBlockParam = Anthropic.Messages.ToolResultBlockParam;
type ToolUseBlock = Anthropic.Messages.ToolUseBlock;
type ToolBash = Anthropic.Messages.ToolBash20250124;
type ToolTextEditor = Anthropic.Messages.ToolTextEditor20250728;

/** The name Anthropic's text editor tool (`text_editor_20250728`) must have. */
export const TEXT_EDITOR_NAME = "str_replace_based_edit_tool";

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
  return toolResultBlock(toolUse.id, result);
}

/** A result as the `tool_result` block answering the `tool_use` block `id`. */
function toolResultBlock(id: string, { output, error }: ToolResult): ToolResultBlockParam {
  return { type: "tool_result", tool_use_id: id, content: output, is_error: error };
}

/** Options of {@link toAnthropicNativeTools}. */
export interface AnthropicNativeToolOptions {
  /** The text editor's `max_characters`: how much of a file one `view` shows, when set. */
  maxCharacters?: number;
}

/**
 * Pleach tools for the Messages API with Claude's built-in tool shapes, which Claude is trained on:
 * `bash` as `bash_20250124`, and `read_file`, `list_files`, `write_file` and `edit_file` together
 * as the text editor `text_editor_20250728` (`str_replace_based_edit_tool`), each offered when the
 * tools it runs are given; every other tool as a custom tool. Answer the calls with
 * {@link runAnthropicNativeToolUse}.
 */
export function toAnthropicNativeTools(
  tools: readonly AnyToolDefinition[],
  { maxCharacters }: AnthropicNativeToolOptions = {},
): Array<Tool | ToolBash | ToolTextEditor> {
  const has = (name: string) => tools.some((tool) => tool.name === name);
  const editor = TEXT_EDITOR_TOOL_NAMES.every(has);
  const native: Array<ToolBash | ToolTextEditor> = [];
  if (has("bash")) native.push({ type: "bash_20250124", name: "bash" });
  if (editor) {
    native.push({
      type: "text_editor_20250728",
      name: TEXT_EDITOR_NAME,
      ...(maxCharacters === undefined ? {} : { max_characters: maxCharacters }),
    });
  }
  const covered = (name: string) =>
    name === "bash" || (editor && (TEXT_EDITOR_TOOL_NAMES as readonly string[]).includes(name));
  return [...native, ...toAnthropicTools(tools.filter((tool) => !covered(tool.name)))];
}

/**
 * Run one `tool_use` block of a request made with {@link toAnthropicNativeTools}: the text editor
 * through {@link runAnthropicTextEditor}; `bash` (`{ command }`) through pleach's `bash`, each
 * command in a fresh shell (pleach keeps no shell session, so `{ restart: true }` has nothing to
 * restart); any other through {@link runAnthropicToolUse}. Never throws.
 */
export async function runAnthropicNativeToolUse({
  tools,
  toolUse,
  context,
  maxChars,
}: {
  tools: readonly AnyToolDefinition[];
  toolUse: Pick<ToolUseBlock, "id" | "name" | "input">;
} & RunToolCallOptions): Promise<ToolResultBlockParam> {
  const answer = (result: ToolResult) => toolResultBlock(toolUse.id, result);
  const callContext = { ...context, toolCallId: toolUse.id };
  if (toolUse.name === TEXT_EDITOR_NAME) {
    return answer(
      await runAnthropicTextEditor({
        tools,
        input: toolUse.input as AnthropicTextEditorInput,
        context: callContext,
        maxChars,
      }),
    );
  }
  const input = toolUse.input as { command?: unknown; restart?: unknown } | null;
  if (toolUse.name === "bash" && input?.restart === true && input.command === undefined) {
    return answer({
      output: "tool has been restarted. (Each command runs in a fresh shell; no state was kept.)",
      error: false,
    });
  }
  if (toolUse.name === "bash") {
    return answer(
      await runToolCall({
        tools,
        name: "bash",
        input: { command: input?.command },
        context: callContext,
        maxChars,
      }),
    );
  }
  return runAnthropicToolUse({ tools, toolUse, context, maxChars });
}
