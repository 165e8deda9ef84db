import {
  CODING_AGENT_TOOL_NAMES,
  createCodingAgentTools,
  showControlCharacters,
} from "@pleach/coding-agent/tools";
import { isToolError, renderToolResult } from "@pleach/core";
import {
  type CliIo,
  domainOptionsHelp,
  parseCommandLineOrHelp,
  parseMode,
  parseNetworkFlags,
  parseToolName,
  type ToolCommandInput,
  UsageError,
  WORKSPACE_OPTIONS,
} from "../cli-support.js";
import { openWorkspace } from "../open-workspace.js";
import { startProgress } from "../progress.js";
import { parseReadFlags, readOptionsHelp } from "../read-flags.js";
import { onTermination } from "../termination.js";

/** The options `pleach call` takes. */
export const CALL_OPTIONS = {
  ...WORKSPACE_OPTIONS,
  text: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** How `pleach call` is used: the first line of its help and its line in `pleach help`. */
export const CALL_USAGE =
  "pleach call <tool> ['<json>'] [--workspace DIR] [--mode MODE] [--network] [--text]\n    [--allow-domain HOST]... [--deny-domain HOST]... [--hide-read PATH]...\n    [--allow-read PATH]... [--no-caches] [--allow-git-writes] [--allow-write DIR]...";

/** `pleach call --help`. */
export const CALL_HELP = `Usage: ${CALL_USAGE}

Run one tool on a workspace. The input is a JSON object, given as an argument or on
standard input; without either it is {}. The result is printed as JSON on stdout.

Options:
  --workspace DIR   the workspace folder (default: the current folder)
  --mode MODE       read-only | workspace-write | danger-full-access
                    (default: workspace-write)
  --network         let sandboxed commands reach the network (git_clone of a remote URL)
${domainOptionsHelp(20)}
  --text            print what a model would see instead of JSON: the tool's model-facing
                    text, cut in the middle past 50,000 characters as a model gets it
${readOptionsHelp(20)}
  -h, --help        show this help

Exit codes: 0 the tool succeeded; 1 the tool reported an error (a refused path, a failed
edit, a command that exited non-zero); 2 the command line was wrong; 130 or 143 stopped by
SIGINT (Ctrl-C) or SIGTERM, after stopping the tool's command; 141 when stdout or stderr is closed early
(pleach call ... | head -1), which ends the call quietly, as SIGPIPE would.

While a call runs for more than a second, its elapsed time is shown on stderr when stderr
is a terminal.

Tools: ${CODING_AGENT_TOOL_NAMES.join(", ")} ('pleach tools' shows their inputs)

Example:
  pleach call list_files '{"dir": "."}'
  echo '{"path": "README.md"}' | pleach call read_file
`;

/** `pleach call <tool> ['<json>']`: run one tool and print its result; resolves to the exit code. */
export async function callCommand(command: ToolCommandInput): Promise<number> {
  const { io, extraTools = [] } = command;
  const parsed = parseCommandLineOrHelp(command, "call", CALL_OPTIONS, CALL_HELP);
  if (parsed === undefined) return 0;
  const { values, positionals } = parsed;
  const [toolName, inputText, ...extra] = positionals;
  if (toolName === undefined) {
    throw new UsageError("call needs a tool name: pleach call <tool> '<json>'", {
      command: "call",
    });
  }
  if (extra.length > 0) {
    throw new UsageError(
      `unexpected arguments: ${extra.join(" ")} (quote the JSON input as one argument)`,
      { command: "call" },
    );
  }
  const name = parseToolName({ name: toolName, command: "call", extraTools });
  const mode = parseMode({ mode: values.mode, command: "call" });
  const input = parseInput(inputText ?? (await io.readStdin()));

  const client = await openWorkspace({
    workspace: values.workspace,
    mode,
    network: parseNetworkFlags(values, "call"),
    reads: parseReadFlags(values, io),
    io,
    command: "call",
  });
  const [tool] = createCodingAgentTools(client, { only: [name], extraTools });
  if (tool === undefined) throw new UsageError(`unknown tool ${name}`, { command: "call" });
  const progress = startProgress({ label: name, io });
  // A signal stops the tool's command and waits for it, so that the process exits normally,
  // having looked at what the command made.
  const termination = onTermination();
  try {
    const output = await tool.execute(input, { abortSignal: termination.signal });
    progress.stop();
    if (termination.exitStatus !== undefined) return stopped(io, name, termination.exitStatus);
    // --text is what a model reads: the model-facing text, capped as every face caps it.
    const rendered = renderToolResult({ ok: true, result: tool.toModelOutput(output) });
    // What the tool read or ran is printed with its control characters made visible.
    const text = values.text ? rendered.output : JSON.stringify(output, null, 2);
    io.stdout(`${showControlCharacters(text, { multiline: true })}\n`);
    return rendered.error ? 1 : 0;
  } catch (error) {
    progress.stop();
    if (termination.exitStatus !== undefined) return stopped(io, name, termination.exitStatus);
    if (!isToolError(error)) throw error;
    const text = values.text
      ? renderToolResult({ ok: false, error }).output
      : JSON.stringify({ error: { code: error.code, message: error.message } }, null, 2);
    io.stdout(`${showControlCharacters(text, { multiline: true })}\n`);
    return 1;
  } finally {
    termination.dispose();
  }
}

function stopped(io: CliIo, tool: string, status: number): number {
  io.stderr(`pleach: ${tool} stopped by ${status === 130 ? "SIGINT" : "SIGTERM"}\n`);
  return status;
}

function parseInput(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `the input is not valid JSON: ${(error as Error).message}; give one JSON object in single quotes, e.g. '{"path": "README.md"}'`,
      { command: "call" },
    );
  }
}
