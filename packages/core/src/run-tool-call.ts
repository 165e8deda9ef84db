import type { AnyToolDefinition, ToolExecutionContext, ToolResult } from "./define-tool.js";
import { ToolError } from "./errors.js";
import type { JSONSchema } from "./json-schema.js";
import { toolInputJSONSchema } from "./json-schema.js";
import { renderToolResult } from "./render.js";
import { removeStrictNulls } from "./strict-schema.js";

/** What the adapters' `run...` functions take besides the call itself. */
export interface RunToolCallOptions {
  /**
   * Passed to `execute` (an abort signal; the call's id is set from the call).
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
 * A call's arguments: parsed (`input`), or the JSON text the wire carries (`inputText`), parsed
 * here so that text that is not JSON becomes an error the model can read.
 */
export type ToolCallArguments = { input: unknown } | { inputText: string };

/**
 * Run the tool a model named with the arguments it sent and render the outcome as the capped
 * `{ output, error }` a model reads. Never throws: an unknown tool, arguments that are not JSON
 * and every tool failure become error results the model can read, and a failure caused by an
 * abort reads as `aborted`. With `strict`, `null`s the strict schema made the model send for
 * absent optionals are removed before the tool validates its input. The adapters, the toolset
 * and the agent runtime all run calls through this one function.
 */
export async function runToolCall({
  tools,
  name,
  strict = false,
  context = {},
  maxChars,
  ...args
}: {
  tools: readonly AnyToolDefinition[];
  name: string;
  /** @default false */
  strict?: boolean;
} & ToolCallArguments &
  RunToolCallOptions): Promise<ToolResult> {
  try {
    const tool = tools.find((candidate) => candidate.name === name);
    if (tool === undefined) {
      throw new ToolError(
        "INVALID_INPUT",
        `there is no tool named ${JSON.stringify(name)}; the tools are: ${tools.map((candidate) => candidate.name).join(", ")}`,
      );
    }
    let input = "inputText" in args ? parseArguments({ name, text: args.inputText }) : args.input;
    if (strict) input = removeStrictNulls({ schema: inputSchemaOf(tool), value: input });
    const output = await tool.execute(input, context);
    return renderToolResult({ ok: true, result: tool.toModelOutput(output) }, { maxChars });
  } catch (error) {
    return renderToolResult({ ok: false, error }, { maxChars, abortSignal: context.abortSignal });
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
      `the arguments of ${name} are not valid JSON (${(error as Error).message}); send one JSON object matching its parameters.`,
    );
  }
}
