import type { AnyToolDefinition, ToolExecutionContext, ToolResult } from "../define-tool.js";
import { ToolError } from "../errors.js";
import type { JSONSchema } from "../json-schema.js";
import { toolInputJSONSchema } from "../json-schema.js";
import { renderToolResult } from "../render.js";
import { removeStrictNulls } from "../strict-schema.js";

/** What the adapters' `run...` functions take besides the call itself. */
export interface RunToolCallOptions {
  /**
   * Passed to `execute` (seed 002's `cwd` and `sandbox`, an abort signal).
   * @default {}
   */
  context?: ToolExecutionContext;
  /**
   * The most characters of a result the model sees.
   * @default 50_000
   */
  maxChars?: number;
}

/**
 * Run the tool a model named with the arguments it sent (a JSON string, as the wire carries
 * them, or a parsed value) and render the outcome as seed 002's capped `{ output, error }`.
 * Never throws: an unknown tool, arguments that are not JSON and every tool failure become
 * error results the model can read. With `strict`, `null`s the strict schema made the model
 * send for absent optionals are removed before the tool validates its input.
 */
export async function runToolCall({
  tools,
  name,
  args,
  strict = false,
  context = {},
  maxChars,
}: {
  tools: readonly AnyToolDefinition[];
  name: string;
  args: unknown;
  /** @default false */
  strict?: boolean;
} & RunToolCallOptions): Promise<ToolResult> {
  try {
    const tool = tools.find((candidate) => candidate.name === name);
    if (tool === undefined) {
      throw new ToolError(
        "INVALID_INPUT",
        `there is no tool named ${JSON.stringify(name)}; the tools are: ${tools.map((candidate) => candidate.name).join(", ")}`,
      );
    }
    let input = typeof args === "string" ? parseArguments({ name, text: args }) : args;
    if (strict) input = removeStrictNulls({ schema: inputSchemaOf(tool), value: input });
    const output = await tool.execute(input, context);
    return renderToolResult({ ok: true, result: tool.toModelOutput(output) }, { maxChars });
  } catch (error) {
    return renderToolResult({ ok: false, error }, { maxChars });
  }
}

const schemaCache = new WeakMap<AnyToolDefinition, JSONSchema>();

function inputSchemaOf(tool: AnyToolDefinition): JSONSchema {
  let schema = schemaCache.get(tool);
  if (schema === undefined) {
    schema = toolInputJSONSchema(tool);
    schemaCache.set(tool, schema);
  }
  return schema;
}

function parseArguments({ name, text }: { name: string; text: string }): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ToolError(
      "INVALID_INPUT",
      `the arguments of ${name} are not valid JSON (${(error as Error).message}); send one JSON object`,
    );
  }
}
