import { type Editor, type FunctionTool, type Shell, tool } from "@openai/agents";
import { type AnyToolDefinition, runToolCall, toolInputJSONSchema } from "@pleach/core";
import { runOpenAIApplyPatchCall, runOpenAIShellCall } from "@pleach/core/openai";
import type { SandboxClient } from "../sandbox/index.js";
import { createApplyDiffTool } from "../tools/apply-diff/tool.js";
import { createBashTool } from "../tools/bash/tool.js";

/** Options of {@link createPleachShell} and {@link createPleachEditor}. */
export interface OpenAIAgentsSandboxOptions {
  /**
   * The pleach tools to run through instead of ones made over the client (`bash` for the shell,
   * `apply_diff` for the editor), for tools wrapped with a session's file state, say.
   */
  tools?: readonly AnyToolDefinition[];
}

/**
 * An Agents SDK `Shell` over any pleach `SandboxClient`, for `shellTool({ shell })`: each command
 * of a `shell_call` runs through pleach's `bash` in the sandbox, with the call's timeout, its text
 * for the model capped at the call's `maxOutputLength`.
 */
export function createPleachShell(
  client: SandboxClient,
  { tools = [createBashTool(client)] }: OpenAIAgentsSandboxOptions = {},
): Shell {
  let calls = 0;
  return {
    async run(action) {
      calls += 1;
      const result = await runOpenAIShellCall({
        tools,
        call: {
          call_id: `pleach-shell-${calls}`,
          action: {
            commands: action.commands,
            timeout_ms: action.timeoutMs ?? null,
            max_output_length: action.maxOutputLength ?? null,
          },
        },
      });
      return {
        output: result.output.map(({ stdout, stderr, outcome }) => ({
          stdout,
          stderr,
          outcome:
            outcome.type === "timeout"
              ? { type: "timeout" }
              : { type: "exit", exitCode: outcome.exit_code },
        })),
        ...(action.maxOutputLength === undefined
          ? {}
          : { maxOutputLength: action.maxOutputLength }),
      };
    },
  };
}

/**
 * An Agents SDK `Editor` over any pleach `SandboxClient`, for `applyPatchTool({ editor })`: each
 * operation's V4A diff goes through pleach's `apply_diff` engine, exact or refused, never
 * misapplied; a refusal is a `failed` result whose output says why and what to do.
 */
export function createPleachEditor(
  client: SandboxClient,
  { tools = [createApplyDiffTool(client)] }: OpenAIAgentsSandboxOptions = {},
): Editor {
  const apply = async (
    operation:
      | Parameters<Editor["updateFile"]>[0]
      | Parameters<Editor["createFile"]>[0]
      | Parameters<Editor["deleteFile"]>[0],
  ) => {
    const { status, output } = await runOpenAIApplyPatchCall({
      tools,
      call: { call_id: "pleach-editor", operation },
    });
    return { status, output: output ?? "" };
  };
  return { createFile: apply, updateFile: apply, deleteFile: apply };
}

/**
 * Pleach tools as Agents SDK function tools, for `new Agent({ tools })`: each with its JSON Schema
 * (not strict, so the tool's own validation and messages are the ones the model reads), run through
 * the same path as every other face, the model reading the tool's capped text.
 */
export function toOpenAIAgentsTools(tools: readonly AnyToolDefinition[]): FunctionTool[] {
  return tools.map(
    (pleachTool) =>
      tool({
        name: pleachTool.name,
        description: pleachTool.description,
        parameters: toolInputJSONSchema(pleachTool) as never,
        strict: false,
        execute: async (input: unknown) => {
          const result = await runToolCall({ tools: [pleachTool], name: pleachTool.name, input });
          return result.output;
        },
      }) as unknown as FunctionTool,
  );
}
