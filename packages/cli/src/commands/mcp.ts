import { realpathSync } from "node:fs";
import path from "node:path";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import {
  CODING_AGENT_TOOL_NAMES,
  createCodingAgentTools,
  createTypeDiagnostics,
  showControlCharacters,
  type TypeDiagnostics,
} from "@pleach/coding-agent/tools";
import { MODEL_OUTPUT_LIMIT, renderToolResult } from "@pleach/core";
import type { LocalSandbox } from "@pleach/sandbox";
import { ALLOW_HOST_OPTION, allowHostHelp, parseAllowHosts } from "../allow-host.js";
import {
  type CommandInput,
  counted,
  domainOptionsHelp,
  parseCommandLine,
  parseMode,
  parseNetworkFlags,
  parsePublishFlags,
  parseToolName,
  readBearerToken,
  UsageError,
  VERSION,
  WORKSPACE_OPTIONS,
} from "../cli-support.js";
import { startMcpHttpServer } from "../http-server.js";
import { createPleachMcpServerFactory, type PleachMcpServerFactory } from "../mcp-server.js";
import { PleachStdioWire } from "../mcp-stdio-wire.js";
import { openWorkspace } from "../open-workspace.js";
import { parseReadFlags, type ReadFlags, readOptionsHelp } from "../read-flags.js";
import { onTermination, type Termination } from "../termination.js";
import { bundledTypeServers } from "../type-servers.js";

/** The options `pleach mcp` takes. */
export const MCP_OPTIONS = {
  ...WORKSPACE_OPTIONS,
  tools: { type: "string" },
  "progress-interval": { type: "string" },
  "max-result-chars": { type: "string" },
  "structured-output": { type: "boolean" },
  diagnostics: { type: "string" },
  http: { type: "string" },
  "token-file": { type: "string" },
  publish: { type: "string", multiple: true },
  ...ALLOW_HOST_OPTION,
  help: { type: "boolean", short: "h" },
} as const;

/** How `pleach mcp` is used: the first line of its help and its line in `pleach help`. */
export const MCP_USAGE = `pleach mcp [--workspace DIR] [--mode MODE] [--network] [--tools a,b]
    [--progress-interval SECONDS] [--max-result-chars N] [--structured-output]
    [--diagnostics syntax|types] [--http [HOST:]PORT] [--token-file FILE]
    [--allow-host NAME]... [--allow-domain HOST]... [--deny-domain HOST]... [--publish PORT]...
    [--hide-read PATH]... [--allow-read PATH]... [--no-caches] [--allow-git-writes] [--allow-write DIR]...`;

/** `pleach mcp --help`. */
export const MCP_HELP = `Usage: ${MCP_USAGE}

Serve the tools to an MCP client (Claude Code, Claude Desktop, Cursor, VS Code, ...) over
stdio, or over Streamable HTTP with --http. The workspace is fixed when the server starts.

Options:
  --workspace DIR     the workspace folder (default: the current folder)
  --mode MODE         read-only | workspace-write | danger-full-access
                      (default: workspace-write)
  --network           let sandboxed commands reach the network (git_clone of a remote URL)
${domainOptionsHelp(22)}
  --tools a,b,...     serve only these tools (default: all)
  --progress-interval SECONDS
                      how often a running call reports its elapsed time to the client
                      (progress notifications, debug log messages; default: 2)
  --max-result-chars N
                      the most characters of one result (default: 50000): longer ones keep
                      their head and tail, and read_file pages shrink to fit with their hint.
                      Lower it for a client that cuts results shorter itself (Codex)
  --structured-output also list output schemas and send each result as JSON
                      (structuredContent, bounded to the same size) for programs; off by
                      default because agent CLIs then show their model the JSON, not the text
  --diagnostics syntax|types
                      what edit_file, apply_diff and write_file check in the files they wrote:
                      syntax (default), or also the type errors each change made or fixed
                      (types: TypeScript/JavaScript through typescript-language-server, Python
                      through pyright, run in the sandbox as background jobs; from the
                      workspace's node_modules, else pleach's optional dependencies)
  --http [HOST:]PORT  serve Streamable HTTP on /mcp instead of stdio; HOST defaults to
                      127.0.0.1 (give 0.0.0.0 or another address deliberately)
  --token-file FILE   the bearer token HTTP clients must send (or set PLEACH_MCP_TOKEN);
                      --http refuses to start without one. A request body over 4 MiB
                      gets 413 with a JSON-RPC error naming the limit
${allowHostHelp(22)}
  --publish PORT      let the host reach a background job listening on PORT in the sandbox
                      (a dev server), at 127.0.0.1:PORT and nowhere else; repeatable
${readOptionsHelp(22)}
  -h, --help          show this help

Tools: ${CODING_AGENT_TOOL_NAMES.join(", ")}

Examples:
  pleach mcp --workspace ~/src/app --mode read-only
  PLEACH_MCP_TOKEN=$(openssl rand -hex 32) pleach mcp --http 8931
`;

/** `pleach mcp`: serve the tools over MCP until the client goes away; resolves to the exit code. */
export async function mcpCommand({ args, io }: CommandInput): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    command: "mcp",
    options: MCP_OPTIONS,
  });
  if (values.help) {
    io.stdout(MCP_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(`mcp takes no arguments, got ${positionals.join(" ")}`, {
      command: "mcp",
    });
  }
  const mode = parseMode({ mode: values.mode, command: "mcp" });
  const only = values.tools === undefined ? undefined : parseToolList(values.tools);
  const progressIntervalMs = parseProgressInterval(values["progress-interval"]);
  const maxResultChars = parseMaxResultChars(values["max-result-chars"]);
  const listen = values.http === undefined ? undefined : parseListen(values.http);
  const typeServers =
    parseDiagnostics(values.diagnostics) === "types" ? bundledTypeServers() : undefined;
  const allowedHosts = parseAllowHosts({ values: values["allow-host"], command: "mcp" });
  if (listen === undefined && allowedHosts.length > 0) {
    throw new UsageError("--allow-host applies to --http only: stdio has no Host to check", {
      command: "mcp",
    });
  }
  const tokenFile =
    values["token-file"] === undefined ? undefined : path.resolve(io.cwd, values["token-file"]);
  const token =
    listen === undefined
      ? undefined
      : await readBearerToken({
          tokenFile,
          environmentVariable: "PLEACH_MCP_TOKEN",
          command: "mcp",
          purpose: "--http",
          io,
        });

  const client = await openWorkspace({
    workspace: values.workspace,
    mode,
    network: parseNetworkFlags(values, "mcp"),
    reads: allowingTypeServers(
      hidingTokenFile(parseReadFlags(values, io), listen === undefined ? undefined : tokenFile),
      typeServers?.readFolders,
    ),
    io,
    command: "mcp",
    // The process is the session: its commands share one sandbox, where background jobs live.
    session: { publish: parsePublishFlags(values.publish, "mcp") },
  });
  // SIGINT or SIGTERM stops the server: the tool calls' commands are stopped and waited for, so
  // that the process exits normally (130 or 143), having looked at what they made.
  const termination = onTermination();
  const stopping = new AbortController();
  const typeDiagnostics =
    typeServers === undefined
      ? undefined
      : createTypeDiagnostics(client, { servers: typeServers.servers });
  const tools = createCodingAgentTools(client, {
    maxResultChars,
    ...(only === undefined ? {} : { only }),
    ...(typeDiagnostics === undefined ? {} : { typeDiagnostics }),
  });
  // Kept full outputs are linked as resources and read as read_file reads them (one bounded page),
  // whichever tools are served.
  const [keptReader] = createCodingAgentTools(client, { maxResultChars, only: ["read_file"] });
  const factory = createPleachMcpServerFactory({
    tools,
    ...(keptReader === undefined
      ? {}
      : {
          readKeptOutput: async (path: string, abortSignal: AbortSignal) =>
            renderToolResult(
              {
                ok: true,
                result: keptReader.toModelOutput(
                  await keptReader.execute({ path }, { abortSignal }),
                ),
              },
              { maxChars: maxResultChars },
            ).output,
        }),
    logError: (line) =>
      io.stderr(`pleach mcp: ${showControlCharacters(line, { multiline: true })}\n`),
    serverInfo: { name: "pleach", version: VERSION },
    abortSignal: AbortSignal.any([termination.signal, stopping.signal]),
    progressIntervalMs,
    maxResultChars,
    structuredOutput: values["structured-output"] === true,
  });
  const onerror = (error: Error) =>
    io.stderr(`pleach mcp: ${showControlCharacters(error.message, { multiline: true })}\n`);
  const served = `${counted(tools.length, "tool")} on ${client.root} (${client.mode})`;

  if (listen === undefined || token === undefined) {
    // stdout belongs to the protocol from here on: everything human goes to stderr.
    const handle = serveStdio(factory, { onerror, transport: new PleachStdioWire() });
    io.stderr(`pleach mcp: serving ${served} over stdio\n`);
    // A signal ends the server like the end of stdin does, so the commands' ends (and the looks at
    // what they made) run instead of the process dying mid-way.
    await new Promise<void>((resolve) => {
      process.stdin.once("end", resolve);
      process.stdin.once("close", resolve);
      void termination.received.then(resolve);
    });
    await handle.close();
    return await stopServing({ termination, stopping, factory, client, typeDiagnostics });
  }
  const server = await startMcpHttpServer({ factory, token, ...listen, allowedHosts, onerror });
  io.stderr(`pleach mcp: serving ${served} at ${server.url.href}\n`);
  await termination.received;
  await server.close();
  return await stopServing({ termination, stopping, factory, client, typeDiagnostics });
}

/**
 * Once the server is closed: stop the tool calls' commands and wait for them, end the session (its
 * background jobs); the exit status.
 */
async function stopServing({
  termination,
  stopping,
  factory,
  client,
  typeDiagnostics,
}: {
  termination: Termination;
  stopping: AbortController;
  factory: PleachMcpServerFactory;
  client: LocalSandbox;
  typeDiagnostics: TypeDiagnostics | undefined;
}): Promise<number> {
  stopping.abort(new Error("the MCP server stopped"));
  await factory.settled();
  await typeDiagnostics?.close();
  await client.close();
  termination.dispose();
  return termination.exitStatus ?? 0;
}

function parseToolList(text: string) {
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (names.length === 0) {
    throw new UsageError(
      "--tools needs at least one tool name, e.g. --tools read_file,list_files",
      {
        command: "mcp",
      },
    );
  }
  return [...new Set(names)].map((name) => parseToolName({ name, command: "mcp" }));
}

function parseProgressInterval(text: string | undefined): number {
  if (text === undefined) return 2000;
  const seconds = Number(text);
  if (text.trim() === "" || !Number.isFinite(seconds) || seconds < 0.1 || seconds > 3600) {
    throw new UsageError(
      `--progress-interval takes seconds from 0.1 to 3600 (e.g. --progress-interval 5), got ${JSON.stringify(text)}`,
      { command: "mcp" },
    );
  }
  return Math.round(seconds * 1000);
}

function parseMaxResultChars(text: string | undefined): number {
  if (text === undefined) return MODEL_OUTPUT_LIMIT;
  const chars = Number(text);
  if (!/^\d+$/.test(text.trim()) || chars < 2_000 || chars > 10_000_000) {
    throw new UsageError(
      `--max-result-chars takes a number of characters from 2000 to 10000000 (e.g. --max-result-chars 12000), got ${JSON.stringify(text)}`,
      { command: "mcp" },
    );
  }
  return chars;
}

function parseDiagnostics(text: string | undefined): "syntax" | "types" {
  if (text === undefined || text === "syntax" || text === "types") return text ?? "syntax";
  throw new UsageError(
    `--diagnostics takes syntax or types (e.g. --diagnostics types), got ${JSON.stringify(text)}`,
    { command: "mcp" },
  );
}

/** `reads` with the folders of pleach's language servers readable by the sandbox's commands. */
function allowingTypeServers(reads: ReadFlags, folders: readonly string[] = []): ReadFlags {
  return folders.length === 0
    ? reads
    : { ...reads, allowReads: [...new Set([...reads.allowReads, ...folders])] };
}

function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (match === null || port > 65_535) {
    throw new UsageError(
      `--http takes PORT or HOST:PORT (e.g. --http 8931 or --http 127.0.0.1:8931), got ${JSON.stringify(text)}`,
      { command: "mcp" },
    );
  }
  const host = match[1]?.replace(/^\[|\]$/g, "") ?? "127.0.0.1";
  return { host, port };
}

/**
 * `reads` with the token file hidden from the tools served, commands and file tools alike, at the
 * path given and at its real path (a hard link to it elsewhere is refused by `readBearerToken`).
 */
function hidingTokenFile(reads: ReadFlags, tokenFile: string | undefined): ReadFlags {
  if (tokenFile === undefined) return reads;
  return {
    ...reads,
    hideReads: [...new Set([...reads.hideReads, tokenFile, realpathSync(tokenFile)])],
  };
}
