import { toolInputJSONSchema } from "@pleach/core";
import {
  detachedTools,
  parseCommandLineOrHelp,
  type ToolCommandInput,
  UsageError,
} from "../cli-support.js";

/** The options `pleach tools` takes. */
export const TOOLS_OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** How `pleach tools` is used: the first line of its help and its line in `pleach help`. */
export const TOOLS_USAGE = "pleach tools [--json]";

/** `pleach tools --help`. */
export const TOOLS_HELP = `Usage: ${TOOLS_USAGE}

List the tools: name, description and input JSON Schema.

Options:
  --json       print one JSON array of { name, description, inputSchema, annotations }
  -h, --help   show this help
`;

/** `pleach tools`: list the tools with their input schemas; resolves to the exit code. */
export async function toolsCommand(input: ToolCommandInput): Promise<number> {
  const { io, extraTools = [] } = input;
  const parsed = parseCommandLineOrHelp(input, "tools", TOOLS_OPTIONS, TOOLS_HELP);
  if (parsed === undefined) return 0;
  const { values, positionals } = parsed;
  if (positionals.length > 0) {
    throw new UsageError(`tools takes no arguments, got ${positionals.join(" ")}`, {
      command: "tools",
    });
  }
  const described = detachedTools({ extraTools }).map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: toolInputJSONSchema(tool),
    annotations: tool.annotations,
  }));
  if (values.json) {
    io.stdout(`${JSON.stringify(described, null, 2)}\n`);
    return 0;
  }
  for (const tool of described) {
    io.stdout(
      `${tool.name}\n  ${tool.description.split("\n")[0]}\n  input: ${JSON.stringify(tool.inputSchema)}\n\n`,
    );
  }
  return 0;
}
