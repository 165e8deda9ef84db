import type { AnyToolDefinition, ToolResult } from "./define-tool.js";
import type { JSONSchema } from "./json-schema.js";
import { toolInputJSONSchema } from "./json-schema.js";
import { runToolCall } from "./run-tool-call.js";
import type { SandboxMode } from "./sandbox/contract.js";

/** The context of a `ToolDef` call: the working directory and the sandbox mode of the agent. */
export interface ToolContext {
  cwd: string;
  sandbox: SandboxMode;
  abortSignal?: AbortSignal;
  toolCallId?: string;
}

/**
 * The model-facing tool contract: a name, a description the model reads, a JSON Schema for its
 * arguments, and a `run` that always settles to a capped `{ output, error }`, never throws.
 */
export interface ToolDef {
  name: string;
  description: string;
  parameters: JSONSchema;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolResult>;
}

/** Options of {@link toToolDef}. */
export interface ToToolDefOptions {
  /**
   * The most characters of output the model sees per call.
   * @default 50_000
   */
  maxChars?: number;
}

/**
 * Derive the {@link ToolDef} of a {@link AnyToolDefinition}. Pleach's tools are bound to their
 * sandbox client when made, so of the context only the abort signal and the call's id reach them.
 */
export function toToolDef(tool: AnyToolDefinition, { maxChars }: ToToolDefOptions = {}): ToolDef {
  return {
    name: tool.name,
    description: tool.description,
    parameters: toolInputJSONSchema(tool),
    run: (args, { abortSignal, toolCallId }) =>
      runToolCall({
        tools: [tool],
        name: tool.name,
        input: args,
        context: { abortSignal, toolCallId },
        maxChars,
      }),
  };
}
