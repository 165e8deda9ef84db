import { open } from "node:fs/promises";
import { type ParseArgsConfig, parseArgs } from "node:util";
import {
  CODING_AGENT_TOOL_NAMES,
  type CodingAgentTools,
  createCodingAgentTools,
  type ToolRegistration,
} from "@pleach/coding-agent/tools";
import { isToolError, type SandboxMode } from "@pleach/core";
import { type NetworkOption, parseNetworkOption } from "@pleach/sandbox";
import { READ_OPTIONS } from "./read-flags.js";

/** Where the CLI reads and writes; injectable so tests can capture it. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** The whole of standard input, or `undefined` when it is a terminal. */
  readStdin: () => Promise<string | undefined>;
  cwd: string;
  /**
   * Whether stderr is a terminal: progress of long calls is shown only there.
   * @default false
   */
  stderrIsTTY?: boolean;
  /**
   * The environment (`PLEACH_MCP_TOKEN`).
   * @default {}
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** What every command gets: its arguments (after the command's name) and where it prints. */
export interface CommandInput {
  args: readonly string[];
  io: CliIo;
}

/** What a command that offers the tools takes (`pleach call`, `pleach tools`). */
export interface ToolCommandInput extends CommandInput {
  /**
   * Tools besides the fourteen (see `createCodingAgentTools`); the command line offers none.
   * @default []
   */
  extraTools?: readonly ToolRegistration[];
}

/** The version `pleach --version` prints and the MCP server reports. */
export const VERSION = "0.1.0";

/**
 * A count with its noun in agreement, as printed: `1 step`, `2 steps`, `1,024 tool calls`.
 * `plural` is for nouns that do not just take an `s`.
 */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? noun : plural}`;
}

/** The sandbox modes `--mode` accepts. */
const MODES: readonly SandboxMode[] = ["read-only", "workspace-write", "danger-full-access"];

/** A wrong command line: printed with a pointer to `--help`, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** The command whose help to point at. */
  readonly command: string | undefined;
  constructor(message: string, { command }: { command?: string } = {}) {
    super(message);
    this.command = command;
  }
}

type CommandLineConfig<Options extends NonNullable<ParseArgsConfig["options"]>> = {
  args: string[];
  options: Options;
  allowPositionals: true;
  strict: true;
};

/** `node:util` `parseArgs` with positionals allowed and its errors turned into {@link UsageError}s. */
export function parseCommandLine<Options extends NonNullable<ParseArgsConfig["options"]>>({
  args,
  options,
  command,
}: {
  args: readonly string[];
  options: Options;
  command: string;
}): ReturnType<typeof parseArgs<CommandLineConfig<Options>>> {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, { command });
  }
}

/**
 * {@link parseCommandLine}, and `help` printed for `--help`: `undefined` then, for the command to
 * end with exit code 0.
 */
export function parseCommandLineOrHelp<
  Options extends NonNullable<ParseArgsConfig["options"]> & {
    help: { type: "boolean"; short: "h" };
  },
>(
  { args, io }: CommandInput,
  command: string,
  options: Options,
  help: string,
): ReturnType<typeof parseArgs<CommandLineConfig<Options>>> | undefined {
  const parsed = parseCommandLine({ args, options, command });
  if ((parsed.values as { help?: boolean }).help) {
    io.stdout(help);
    return undefined;
  }
  return parsed;
}

/** The network options of every command that opens sandboxes: all of it, or some domains. */
export const NETWORK_OPTIONS = {
  network: { type: "boolean" },
  "allow-domain": { type: "string", multiple: true },
  "deny-domain": { type: "string", multiple: true },
} as const;

/** The help lines of `--allow-domain` and `--deny-domain`, with their texts at `column`. */
export function domainOptionsHelp(column: number): string {
  const pad = " ".repeat(column);
  const line = (flag: string, text: string) =>
    flag.length > column - 4 ? `  ${flag}\n${pad}${text}` : `  ${flag.padEnd(column - 2)}${text}`;
  return [
    line("--allow-domain HOST", "let sandboxed commands reach HOST and no other host, through a"),
    `${pad}proxy that refuses the rest (403); repeatable. *.example.com for every name`,
    `${pad}below it, :PORT for one port (registry.npmjs.org, example.com:8443)`,
    line("--deny-domain HOST", "refuse HOST even when an --allow-domain matches it; repeatable"),
  ].join("\n");
}

/**
 * `--network`, `--allow-domain` and `--deny-domain` as the sandbox's `network` option, each
 * pattern checked: a wrong one, or `--network` with a domain list, is a {@link UsageError}.
 */
export function parseNetworkFlags(
  values: {
    network?: boolean | undefined;
    "allow-domain"?: string[] | undefined;
    "deny-domain"?: string[] | undefined;
  },
  command: string,
): NetworkOption {
  const allowDomains = values["allow-domain"] ?? [];
  const denyDomains = values["deny-domain"] ?? [];
  if (allowDomains.length === 0) {
    if (denyDomains.length > 0) {
      throw new UsageError(
        "--deny-domain narrows an --allow-domain list; give the domains commands may reach with --allow-domain",
        { command },
      );
    }
    return values.network ?? false;
  }
  if (values.network) {
    throw new UsageError(
      "--network lets commands reach every host and --allow-domain only some; give one of them",
      { command },
    );
  }
  try {
    parseNetworkOption({ allowDomains, denyDomains });
  } catch (error) {
    if (isToolError(error))
      throw new UsageError(`--allow-domain/--deny-domain: ${error.message}`, { command });
    throw error;
  }
  return { allowDomains, denyDomains };
}

/** The options every command that opens a workspace takes. */
export const WORKSPACE_OPTIONS = {
  workspace: { type: "string" },
  mode: { type: "string" },
  ...NETWORK_OPTIONS,
  ...READ_OPTIONS,
} as const;

/** `--publish PORT` (repeatable) as the ports of a session to publish on the host's loopback. */
export function parsePublishFlags(values: string[] | undefined, command: string): number[] {
  return (values ?? []).map((value) => {
    const port = /^[0-9]{1,5}$/.test(value) ? Number(value) : Number.NaN;
    if (!(port >= 1 && port <= 65_535)) {
      throw new UsageError(
        `--publish takes a TCP port from 1 to 65535, got ${JSON.stringify(value)}`,
        {
          command,
        },
      );
    }
    return port;
  });
}

/** Check `--mode`, naming the accepted values when it is wrong. */
export function parseMode({
  mode = "workspace-write",
  command,
}: {
  /** @default "workspace-write" */
  mode?: string | undefined;
  command: string;
}): SandboxMode {
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new UsageError(`--mode must be one of ${MODES.join(", ")}, got ${JSON.stringify(mode)}`, {
      command,
    });
  }
  return mode as SandboxMode;
}

/** Check a tool name, listing the tools when it is unknown. */
export function parseToolName({
  name,
  command,
  extraTools = [],
}: {
  name: string;
  command: string;
  /**
   * Tools known besides the fourteen.
   * @default []
   */
  extraTools?: readonly ToolRegistration[];
}): string {
  const known = [...CODING_AGENT_TOOL_NAMES, ...extraTools.map((tool) => tool.name)];
  if (!known.includes(name)) {
    throw new UsageError(
      `unknown tool ${JSON.stringify(name)}; the tools are: ${known.join(", ")}`,
      { command },
    );
  }
  return name;
}

/** The tools, described without touching any workspace: over a client that refuses everything. */
export function detachedTools({
  extraTools = [],
}: {
  /**
   * Tools described after the fourteen.
   * @default []
   */
  extraTools?: readonly ToolRegistration[];
} = {}): CodingAgentTools {
  const refuse = async (): Promise<never> => {
    throw new Error("these tools only describe themselves; they do not run");
  };
  // Named, the tools a client must offer more for (the job tools) are described too.
  return createCodingAgentTools(
    { exec: refuse, readFile: refuse, writeFile: refuse },
    { extraTools, only: [...CODING_AGENT_TOOL_NAMES, ...extraTools.map((tool) => tool.name)] },
  );
}

/** Options of {@link readBearerToken}. */
export interface ReadBearerTokenOptions {
  /** The `--token-file` value, if given; it wins over the environment variable. */
  tokenFile: string | undefined;
  /** The environment variable that may hold the token instead. */
  environmentVariable: string;
  /** The command asking, for the usage error's help pointer. */
  command: string;
  /** What needs the token, for the message: `"--http"`, `"sandbox serve"`. */
  purpose: string;
  io: CliIo;
}

/**
 * The bearer token a server command requires, from `--token-file` or the environment: trimmed,
 * at least 16 characters and without whitespace, or a usage error that says how to make one.
 */
export async function readBearerToken({
  tokenFile,
  environmentVariable,
  command,
  purpose,
  io,
}: ReadBearerTokenOptions): Promise<string> {
  let token = io.env?.[environmentVariable];
  if (tokenFile !== undefined) {
    let links: number;
    try {
      const file = await open(tokenFile, "r");
      try {
        links = (await file.stat()).nlink;
        token = await file.readFile("utf8");
      } finally {
        await file.close();
      }
    } catch (error) {
      throw new UsageError(`cannot read --token-file ${tokenFile}: ${(error as Error).message}`, {
        command,
      });
    }
    // Sandboxed commands are kept from the token file by its path: another name of the same file
    // (a hard link) could be in a folder they read.
    if (links > 1) {
      throw new UsageError(
        `--token-file ${tokenFile} has ${links} hard links, and sandboxed commands could read the token through another of them: give the token a file of its own (cp ${tokenFile} NEW && rm ${tokenFile})`,
        { command },
      );
    }
  }
  token = token?.trim();
  if (token === undefined || token.length < 16 || /\s/.test(token)) {
    throw new UsageError(
      `${purpose} needs a bearer token of at least 16 characters without whitespace: pass --token-file FILE or set ${environmentVariable} (e.g. openssl rand -hex 32 > token)`,
      { command },
    );
  }
  return token;
}
