import { type ParseArgsConfig, parseArgs } from "node:util";
import {
  CODING_AGENT_TOOL_NAMES,
  type CodingAgentToolName,
  createCodingAgentTools,
} from "@pleach/coding-agent/tools";
import { isToolError, type SandboxMode, toolInputJSONSchema } from "@pleach/core";
import { createLocalSandbox } from "@pleach/sandbox";

/** Where the CLI writes; injectable so tests can capture it. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** The whole of standard input, or `undefined` when it is a terminal. */
  readStdin: () => Promise<string | undefined>;
  cwd: string;
}

const VERSION = "0.1.0";
const MODES: readonly SandboxMode[] = ["read-only", "workspace-write", "danger-full-access"];

const HELP = `pleach — tools for LLM coding agents: run, see, change, safely and exactly.

Usage:
  pleach call <tool> ['<json>'] [--workspace DIR] [--mode MODE] [--text]
  pleach tools [--json]
  pleach help [command]
  pleach --version

Commands:
  call    Run one tool on a workspace and print its result as JSON.
  tools   List the tools with their input schemas.

Run 'pleach <command> --help' for a command's options.
`;

const CALL_HELP = `Usage: pleach call <tool> ['<json>'] [options]

Run one tool on a workspace. The input is a JSON object, given as an argument or on
standard input; without either it is {}. The result is printed as JSON on stdout.

Options:
  --workspace DIR   the workspace folder (default: the current folder)
  --mode MODE       read-only | workspace-write | danger-full-access
                    (default: workspace-write)
  --text            print what a model would see ({ output, error } text) instead of JSON
  -h, --help        show this help

Exit codes: 0 the tool succeeded; 1 the tool reported an error (a refused path, a failed
edit, a command that exited non-zero); 2 the command line was wrong.

Tools: ${CODING_AGENT_TOOL_NAMES.join(", ")}

Example:
  pleach call list_files '{"dir": "."}'
  echo '{"path": "README.md"}' | pleach call read_file
`;

const TOOLS_HELP = `Usage: pleach tools [--json]

List the tools: name, description and input JSON Schema.

Options:
  --json       print one JSON array of { name, description, inputSchema, annotations }
  -h, --help   show this help
`;

class UsageError extends Error {}

function defaultIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      if (process.stdin.isTTY) return undefined;
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    cwd: process.cwd(),
  };
}

/** Run the `pleach` command line with `argv` (without the node and script paths); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo = defaultIo()): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case "help":
      case "-h":
      case "--help":
        io.stdout(helpFor(rest[0]));
        return 0;
      case "--version":
      case "-v":
        io.stdout(`${VERSION}\n`);
        return 0;
      case "call":
        return await callCommand(rest, io);
      case "tools":
        return await toolsCommand(rest, io);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`pleach: ${error.message}\nRun 'pleach --help' for usage.\n`);
      return 2;
    }
    if (isToolError(error)) {
      io.stderr(`pleach: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

function helpFor(command: string | undefined): string {
  if (command === "call") return CALL_HELP;
  if (command === "tools") return TOOLS_HELP;
  return HELP;
}

function parse<Options extends NonNullable<ParseArgsConfig["options"]>>(
  args: readonly string[],
  options: Options,
) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function callCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    workspace: { type: "string" },
    mode: { type: "string" },
    text: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.stdout(CALL_HELP);
    return 0;
  }
  const [toolName, inputText, ...extra] = positionals;
  if (toolName === undefined)
    throw new UsageError("call needs a tool name: pleach call <tool> '<json>'");
  if (extra.length > 0)
    throw new UsageError(
      `unexpected arguments: ${extra.join(" ")} (quote the JSON input as one argument)`,
    );
  if (!(CODING_AGENT_TOOL_NAMES as readonly string[]).includes(toolName)) {
    throw new UsageError(
      `unknown tool ${JSON.stringify(toolName)}; the tools are: ${CODING_AGENT_TOOL_NAMES.join(", ")}`,
    );
  }
  const mode = (values.mode ?? "workspace-write") as string;
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new UsageError(`--mode must be one of ${MODES.join(", ")}, got ${JSON.stringify(mode)}`);
  }
  const input = parseInput(inputText ?? (await io.readStdin()));

  const client = await createLocalSandbox({
    root: typeof values.workspace === "string" ? values.workspace : io.cwd,
    mode: mode as SandboxMode,
  });
  const [tool] = createCodingAgentTools(client, { only: [toolName as CodingAgentToolName] });
  if (tool === undefined) throw new UsageError(`unknown tool ${toolName}`);
  try {
    const output = await tool.execute(input, { cwd: client.root, sandbox: client.mode });
    const rendered = tool.toModelOutput(output);
    io.stdout(values.text ? `${rendered.output}\n` : `${JSON.stringify(output, null, 2)}\n`);
    return rendered.error ? 1 : 0;
  } catch (error) {
    if (!isToolError(error)) throw error;
    io.stdout(
      values.text
        ? `${error.message}\n`
        : `${JSON.stringify({ error: { code: error.code, message: error.message } }, null, 2)}\n`,
    );
    return 1;
  }
}

function parseInput(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`the input is not valid JSON: ${(error as Error).message}`);
  }
}

async function toolsCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.stdout(TOOLS_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`tools takes no arguments, got ${positionals.join(" ")}`);
  // The tools are described without touching any workspace: a client that refuses everything.
  const tools = createCodingAgentTools(detachedClient);
  const described = tools.map((tool) => ({
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

const refuse = async (): Promise<never> => {
  throw new Error("pleach tools does not run tools");
};
const detachedClient = { exec: refuse, readFile: refuse, writeFile: refuse };
