import type { AnyToolDefinition, ToolResult } from "./define-tool.js";
import type { JSONSchema } from "./json-schema.js";
import { toolInputJSONSchema } from "./json-schema.js";
import { renderToolResult } from "./render.js";
import type { SandboxMode } from "./sandbox/contract.js";

/** Seed 002's context of a tool call: the working directory and the sandbox mode. */
export interface ToolContext {
  cwd: string;
  sandbox: SandboxMode;
  abortSignal?: AbortSignal;
  toolCallId?: string;
}

/**
 * Seed 002's model-facing tool: a name, a description the model reads, a JSON Schema for its
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

/** Derive seed 002's {@link ToolDef} from a {@link AnyToolDefinition}. */
export function toToolDef(tool: AnyToolDefinition, { maxChars }: ToToolDefOptions = {}): ToolDef {
  return {
    name: tool.name,
    description: tool.description,
    parameters: toolInputJSONSchema(tool),
    async run(args, context) {
      try {
        const output = await tool.execute(args, context);
        return renderToolResult({ ok: true, result: tool.toModelOutput(output) }, { maxChars });
      } catch (error) {
        return renderToolResult({ ok: false, error }, { maxChars });
      }
    },
  };
}
