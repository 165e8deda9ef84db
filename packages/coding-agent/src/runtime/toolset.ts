import {
  type AnyToolDefinition,
  renderToolResult,
  type ToolContext,
  type ToolDef,
  ToolError,
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
  /** Seed 002's model-facing definitions, one per tool. */
  readonly toolDefs: readonly ToolDef[];
  /** The tool called `name`, if there is one. */
  get(name: string): AnyToolDefinition | undefined;
  /**
   * Run the tool `name` with the model's arguments and render the result as seed 002's capped
   * `{ output, error }`. Never throws: an unknown tool or a bad argument is an error result.
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
  const toolDefs = tools.map((tool) => toToolDef(tool, { maxChars }));
  const defsByName = new Map(toolDefs.map((toolDef) => [toolDef.name, toolDef]));
  return {
    tools,
    toolDefs,
    get: (name) => byName.get(name),
    async call(name, args, context) {
      const toolDef = defsByName.get(name);
      if (toolDef === undefined) {
        return renderToolResult(
          {
            ok: false,
            error: new ToolError(
              "INVALID_INPUT",
              `there is no tool named ${JSON.stringify(name)}; the tools are: ${[...byName.keys()].join(", ")}`,
            ),
          },
          { maxChars },
        );
      }
      // A non-object reaches the tool's input validation, which says what was expected.
      return toolDef.run(args as Record<string, unknown>, context);
    },
  };
}
