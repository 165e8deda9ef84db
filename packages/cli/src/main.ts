import { isToolError } from "@pleach/core";
import { type CliIo, UsageError, VERSION } from "./cli-support.js";
import { CALL_HELP, callCommand } from "./commands/call.js";
import { MCP_HELP, mcpCommand } from "./commands/mcp.js";
import { TOOLS_HELP, toolsCommand } from "./commands/tools.js";

export type { CliIo } from "./cli-support.js";

const HELP = `pleach — tools for LLM coding agents: run, see, change, safely and exactly.

Usage:
  pleach call <tool> ['<json>'] [--workspace DIR] [--mode MODE] [--text]
  pleach tools [--json]
  pleach mcp [--workspace DIR] [--mode MODE] [--tools a,b] [--http [HOST:]PORT]
  pleach help [command]
  pleach --version

Commands:
  call    Run one tool on a workspace and print its result as JSON.
  tools   List the tools with their input schemas.
  mcp     Serve the tools to an MCP client over stdio (or Streamable HTTP).

Run 'pleach <command> --help' for a command's options.
`;

const COMMAND_HELP: Record<string, string> = { call: CALL_HELP, tools: TOOLS_HELP, mcp: MCP_HELP };

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
            `no help for ${JSON.stringify(topic)}: the commands are call, tools, mcp`,
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
      default:
        throw new UsageError(
          `unknown command ${JSON.stringify(command)}; the commands are call, tools, mcp`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      const pointer =
        error.command === undefined ? "pleach --help" : `pleach ${error.command} --help`;
      io.stderr(`pleach: ${error.message}\nRun '${pointer}' for usage.\n`);
      return 2;
    }
    if (isToolError(error)) {
      io.stderr(`pleach: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
