import { showControlCharacters } from "@pleach/coding-agent/tools";
import { isToolError } from "@pleach/core";
import { type CliIo, UsageError, VERSION } from "./cli-support.js";
import { CALL_HELP, callCommand } from "./commands/call.js";
import { DEMO_HELP, demoCommand } from "./commands/demo.js";
import { EVAL_HELP, evalCommand } from "./commands/eval.js";
import { MCP_HELP, mcpCommand } from "./commands/mcp.js";
import { RUN_HELP, runCommand } from "./commands/run.js";
import { SANDBOX_HELP, sandboxCommand } from "./commands/sandbox.js";
import { TOOLS_HELP, toolsCommand } from "./commands/tools.js";

export type { CliIo } from "./cli-support.js";

const HELP = `pleach — tools for LLM coding agents: run, see, change, safely and exactly.

Usage:
  pleach call <tool> ['<json>'] [--workspace DIR] [--mode MODE] [--text]
  pleach tools [--json]
  pleach mcp [--workspace DIR] [--mode MODE] [--tools a,b] [--http [HOST:]PORT]
  pleach demo [--keep] [--json]
  pleach run "<task>" [--workspace DIR] [--model SPEC] [--mode MODE]
  pleach eval <instances.jsonl> | --dataset mini [--model SPEC] [--concurrency N]
  pleach sandbox serve --root DIR --token-file FILE [--listen HOST:PORT] [--mode MODE]
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

Run 'pleach <command> --help' for a command's options.
`;

const COMMAND_HELP: Record<string, string> = {
  call: CALL_HELP,
  tools: TOOLS_HELP,
  mcp: MCP_HELP,
  demo: DEMO_HELP,
  run: RUN_HELP,
  eval: EVAL_HELP,
  sandbox: SANDBOX_HELP,
};

const COMMAND_NAMES = Object.keys(COMMAND_HELP).join(", ");

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
        if (topic !== undefined && COMMAND_HELP[topic] === undefined) {
          throw new UsageError(
            `no help for ${JSON.stringify(topic)}: the commands are ${COMMAND_NAMES}`,
          );
        }
        io.stdout(topic === undefined ? HELP : (COMMAND_HELP[topic] ?? HELP));
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
