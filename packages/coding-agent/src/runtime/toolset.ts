import {
  type AnyToolDefinition,
  runToolCall,
  type ToolContext,
  type ToolDef,
  type ToolResult,
  toToolDef,
} from "@pleach/core";

/** Options of {@link createToolset}. */
export interface ToolsetOptions {
  /**
   * The most characters of a result a model sees.
   * @default 50_000
   */
  maxChars?: number;
}

/** A set of tools addressed by name, the way a model calls them. */
export interface Toolset {
  readonly tools: readonly AnyToolDefinition[];
  /** The model-facing `ToolDef`s, one per tool. */
  readonly toolDefs: readonly ToolDef[];
  /** The tool called `name`, if there is one. */
  get(name: string): AnyToolDefinition | undefined;
  /**
   * Run the tool `name` with the model's arguments and render the result as the capped
   * `{ output, error }` a model reads. Never throws: an unknown tool or a bad argument is an error result.
   */
  call(name: string, args: unknown, context: ToolContext): Promise<ToolResult>;
}

/** Gather tools under their names for dispatch; names must be unique. */
export function createToolset(
  tools: readonly AnyToolDefinition[],
  { maxChars }: ToolsetOptions = {},
): Toolset {
  const byName = new Map<string, AnyToolDefinition>();
  for (const tool of tools) {
    if (byName.has(tool.name))
      throw new TypeError(`two tools are named ${JSON.stringify(tool.name)}`);
    byName.set(tool.name, tool);
  }
  return {
    tools,
    toolDefs: tools.map((tool) => toToolDef(tool, { maxChars })),
    get: (name) => byName.get(name),
    // A non-object reaches the tool's input validation, which says what was expected.
    call: (name, args, { abortSignal, toolCallId }) =>
      runToolCall({ tools, name, input: args, context: { abortSignal, toolCallId }, maxChars }),
  };
}
