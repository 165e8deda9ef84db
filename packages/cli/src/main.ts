import { showControlCharacters } from "@pleach/coding-agent/tools";
import { isToolError } from "@pleach/core";
import { type CliIo, UsageError, VERSION } from "./cli-support.js";
import { CALL_HELP, CALL_OPTIONS, CALL_USAGE, callCommand } from "./commands/call.js";
import { DEMO_HELP, DEMO_OPTIONS, DEMO_USAGE, demoCommand } from "./commands/demo.js";
import { EVAL_HELP, EVAL_OPTIONS, EVAL_USAGE, evalCommand } from "./commands/eval.js";
import { MCP_HELP, MCP_OPTIONS, MCP_USAGE, mcpCommand } from "./commands/mcp.js";
import { RUN_HELP, RUN_OPTIONS, RUN_USAGE, runCommand } from "./commands/run.js";
import {
  SANDBOX_HELP,
  SANDBOX_OPTIONS,
  SANDBOX_USAGE,
  sandboxCommand,
} from "./commands/sandbox.js";
import { TOOLS_HELP, TOOLS_OPTIONS, TOOLS_USAGE, toolsCommand } from "./commands/tools.js";

export type { CliIo } from "./cli-support.js";

/** What `pleach help` says of a command: its usage line, its help and the options it parses. */
interface CommandHelp {
  usage: string;
  help: string;
  options: Readonly<Record<string, { type: "string" | "boolean"; short?: string }>>;
}

/** Every command's usage, help and options, kept in step by a test. */
export const COMMANDS: Readonly<Record<string, CommandHelp>> = {
  call: { usage: CALL_USAGE, help: CALL_HELP, options: CALL_OPTIONS },
  tools: { usage: TOOLS_USAGE, help: TOOLS_HELP, options: TOOLS_OPTIONS },
  mcp: { usage: MCP_USAGE, help: MCP_HELP, options: MCP_OPTIONS },
  demo: { usage: DEMO_USAGE, help: DEMO_HELP, options: DEMO_OPTIONS },
  run: { usage: RUN_USAGE, help: RUN_HELP, options: RUN_OPTIONS },
  eval: { usage: EVAL_USAGE, help: EVAL_HELP, options: EVAL_OPTIONS },
  sandbox: { usage: SANDBOX_USAGE, help: SANDBOX_HELP, options: SANDBOX_OPTIONS },
};

const USAGES = Object.values(COMMANDS)
  .map(({ usage }) => `  ${usage.replaceAll("\n", "\n  ")}`)
  .join("\n");

const HELP = `pleach — tools for LLM coding agents: run, see, change, safely and exactly.

Usage:
${USAGES}
  pleach help [command]
  pleach --version

Commands:
  call    Run one tool on a workspace and print its result as JSON.
  tools   List the tools with their input schemas.
  mcp     Serve the tools to an MCP client over stdio (or Streamable HTTP).
  demo    Watch a scripted agent fix a sample project's failing tests (no API key needed).
  run     Run the agent on a workspace with a model (OpenAI, Anthropic or a local server).
  eval    Evaluate an agent on SWE-bench-style instances (a bundled mini dataset included).
  sandbox Host many sandboxes over HTTP for remote agents (pleach sandbox serve).

Output closed early (pleach tools | head -1) ends any command quietly, with exit code 141
as after SIGPIPE.

Run 'pleach <command> --help' for a command's options.
`;

const COMMAND_NAMES = Object.keys(COMMANDS).join(", ");

/** The exit status of a process that wrote to a closed pipe, as a shell shows SIGPIPE: 128 + 13. */
const CLOSED_PIPE_STATUS = 141;

/**
 * End the process quietly when the reader of stdout or stderr goes away (`pleach tools | head -1`):
 * Node ignores SIGPIPE, so such a write fails with EPIPE, which would otherwise be thrown with its
 * stack. The process exits as SIGPIPE would end it, at once; exit handlers still run (a sandboxed
 * command dies with pleach).
 */
function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(CLOSED_PIPE_STATUS);
    throw error;
  });
}

function defaultIo(): CliIo {
  endQuietlyOnClosedPipe(process.stdout);
  endQuietlyOnClosedPipe(process.stderr);
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
    stderrIsTTY: process.stderr.isTTY === true,
    env: process.env,
  };
}

/** An error message as printed: it may quote a dataset line or a repository's output. */
function shown(message: string): string {
  return showControlCharacters(message, { multiline: true });
}

/** Run the `pleach` command line with `argv` (without the node and script paths); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo = defaultIo()): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case undefined:
      case "-h":
      case "--help":
        io.stdout(HELP);
        return 0;
      case "help": {
        const [topic] = args;
        const help =
          topic === undefined
            ? HELP
            : Object.hasOwn(COMMANDS, topic)
              ? COMMANDS[topic]?.help
              : undefined;
        if (help === undefined) {
          throw new UsageError(
            `no help for ${JSON.stringify(topic)}: the commands are ${COMMAND_NAMES}`,
          );
        }
        io.stdout(help);
        return 0;
      }
      case "--version":
      case "-v":
        io.stdout(`${VERSION}\n`);
        return 0;
      case "call":
        return await callCommand({ args, io });
      case "tools":
        return await toolsCommand({ args, io });
      case "mcp":
        return await mcpCommand({ args, io });
      case "demo":
        return await demoCommand({ args, io });
      case "run":
        return await runCommand({ args, io });
      case "eval":
        return await evalCommand({ args, io });
      case "sandbox":
        return await sandboxCommand({ args, io });
      default:
        throw new UsageError(
          `unknown command ${JSON.stringify(command)}; the commands are ${COMMAND_NAMES}`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      const pointer =
        error.command === undefined ? "pleach --help" : `pleach ${error.command} --help`;
      io.stderr(`pleach: ${shown(error.message)}\nRun '${pointer}' for usage.\n`);
      return 2;
    }
    if (isToolError(error)) {
      io.stderr(`pleach: ${shown(error.message)}\n`);
      return 1;
    }
    throw error;
  }
}
