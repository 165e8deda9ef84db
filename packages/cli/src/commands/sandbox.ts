import { realpathSync } from "node:fs";
import path from "node:path";
import { showControlCharacters } from "@pleach/coding-agent/tools";
import { createCommandWrapper, createSandboxServer } from "@pleach/sandbox";
import { ALLOW_HOST_OPTION, allowHostHelp, parseAllowHosts } from "../allow-host.js";
import {
  type CommandInput,
  domainOptionsHelp,
  NETWORK_OPTIONS,
  parseCommandLine,
  parseMode,
  parseNetworkFlags,
  readBearerToken,
  UsageError,
} from "../cli-support.js";
import { parseReadFlags, READ_OPTIONS, readOptionsHelp } from "../read-flags.js";

/** The options `pleach sandbox serve` takes. */
export const SANDBOX_OPTIONS = {
  root: { type: "string" },
  listen: { type: "string" },
  ...ALLOW_HOST_OPTION,
  "token-file": { type: "string" },
  mode: { type: "string" },
  ...NETWORK_OPTIONS,
  ...READ_OPTIONS,
  "max-sandboxes": { type: "string" },
  "max-request-bytes": { type: "string" },
  "max-file-bytes": { type: "string" },
  "max-output-bytes": { type: "string" },
  "max-exec-timeout-ms": { type: "string" },
  "idle-timeout-ms": { type: "string" },
  "template-root": { type: "string" },
  "git-protocols": { type: "string" },
  protocol: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** How `pleach sandbox serve` is used: the first line of its help and its line in `pleach help`. */
export const SANDBOX_USAGE = `pleach sandbox serve --root DIR --token-file FILE [--listen [HOST:]PORT]
    [--allow-host NAME]... [--mode MODE] [--network] [--allow-domain HOST]...
    [--deny-domain HOST]... [--max-sandboxes N] [--max-request-bytes N]
    [--max-file-bytes N] [--max-output-bytes N]
    [--max-exec-timeout-ms N] [--idle-timeout-ms N] [--template-root DIR]
    [--git-protocols a,b] [--hide-read PATH]... [--allow-read PATH]...
    [--protocol pleach|e2b] [--no-caches] [--allow-git-writes] [--allow-write DIR]...`;

/** `pleach sandbox --help`. */
export const SANDBOX_HELP = `Usage: ${SANDBOX_USAGE}

Host many sandboxes over HTTP for createHttpStreamSandboxProvider: each is a fresh workspace
folder under --root (empty, a copy of a template folder, or a git clone), confined by the same
OS sandbox as the local client, destroyed on release or after --idle-timeout. Every request
needs the bearer token. Stops on SIGINT/SIGTERM, killing running commands.

Options:
  --root DIR                 where the workspaces are made (created if missing)
  --listen [HOST:]PORT       where to listen (default: 127.0.0.1:8700); another host than
                             loopback exposes the server: give it deliberately
${allowHostHelp(29)}
  --token-file FILE          the bearer token (or set PLEACH_SANDBOX_TOKEN); required
  --mode MODE                read-only | workspace-write | danger-full-access
                             (default: workspace-write)
  --network                  let commands reach the network
${domainOptionsHelp(29)}
  --max-sandboxes N          sandboxes alive at once (default: 64)
  --max-request-bytes N      largest request body (default: 33554432, 32 MiB); a larger
                             one gets 413 TOO_LARGE naming this limit
  --max-file-bytes N         largest file a read returns (default: 33554432, 32 MiB)
  --max-output-bytes N       bytes kept of each of stdout and stderr (default: 10485760)
  --max-exec-timeout-ms N    longest time limit a command may ask (default: 3600000)
  --idle-timeout-ms N        destroy a sandbox unused this long (default: 1800000)
  --template-root DIR        folders clients may start sandboxes from, by name
  --git-protocols a,b        URL schemes of git templates (default: https; "" refuses git); the
                             clone runs inside the new sandbox, so https needs --network
                             or --allow-domain of the git host
${readOptionsHelp(29)}
  --protocol pleach|e2b      the protocol spoken (default: pleach, for
                             createHttpStreamSandboxProvider); e2b answers the e2b SDK as a
                             self-hosted E2B: point its apiUrl and sandboxUrl at this URL,
                             with the token as its API key (see docs/remote.md)
  -h, --help                 show this help

Example:
  openssl rand -hex 32 > ~/.pleach-sandbox-token
  pleach sandbox serve --root /srv/pleach --listen 127.0.0.1:8700 --token-file ~/.pleach-sandbox-token
`;

/**
 * `pleach sandbox serve`: run a sandbox server until SIGINT/SIGTERM (or `stopSignal`); resolves to
 * the exit code. Prints the server's URL on stdout, the rest on stderr.
 */
export async function sandboxCommand({
  args,
  io,
  stopSignal,
}: CommandInput & {
  /** Stops the server when aborted. @default SIGINT or SIGTERM */
  stopSignal?: AbortSignal;
}): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    command: "sandbox",
    options: SANDBOX_OPTIONS,
  });
  if (values.help || positionals.length === 0) {
    io.stdout(SANDBOX_HELP);
    return values.help ? 0 : 2;
  }
  if (positionals[0] !== "serve" || positionals.length > 1) {
    throw new UsageError(
      `unknown sandbox subcommand ${JSON.stringify(positionals.join(" "))}; use: pleach sandbox serve`,
      {
        command: "sandbox",
      },
    );
  }
  if (values.root === undefined) {
    throw new UsageError("sandbox serve needs --root DIR: the folder its workspaces are made in", {
      command: "sandbox",
    });
  }
  const mode = parseMode({ mode: values.mode, command: "sandbox" });
  const protocol = values.protocol ?? "pleach";
  if (protocol !== "pleach" && protocol !== "e2b") {
    throw new UsageError(`--protocol takes pleach or e2b, got ${JSON.stringify(protocol)}`, {
      command: "sandbox",
    });
  }
  const { host, port } = parseListen(values.listen ?? "127.0.0.1:8700");
  const allowedHosts = parseAllowHosts({ values: values["allow-host"], command: "sandbox" });
  const tokenFile =
    values["token-file"] === undefined ? undefined : path.resolve(io.cwd, values["token-file"]);
  const token = await readBearerToken({
    tokenFile,
    environmentVariable: "PLEACH_SANDBOX_TOKEN",
    command: "sandbox",
    purpose: "sandbox serve",
    io,
  });
  const number = (name: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new UsageError(`--${name} takes a positive whole number, got ${JSON.stringify(text)}`, {
        command: "sandbox",
      });
    }
    return value;
  };
  const limits = {
    maxSandboxes: number("max-sandboxes", values["max-sandboxes"]),
    maxRequestBytes: number("max-request-bytes", values["max-request-bytes"]),
    maxFileBytes: number("max-file-bytes", values["max-file-bytes"]),
    maxOutputBytes: number("max-output-bytes", values["max-output-bytes"]),
    maxExecTimeoutMs: number("max-exec-timeout-ms", values["max-exec-timeout-ms"]),
    idleTimeoutMs: number("idle-timeout-ms", values["idle-timeout-ms"]),
  };
  const server = await createSandboxServer({
    root: path.resolve(io.cwd, values.root),
    token,
    host,
    port,
    allowedHosts,
    mode,
    protocol,
    network: parseNetworkFlags(values, "sandbox"),
    ...Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined)),
    ...(values["template-root"] === undefined
      ? {}
      : { templateRoot: path.resolve(io.cwd, values["template-root"]) }),
    ...(values["git-protocols"] === undefined
      ? {}
      : {
          gitProtocols: values["git-protocols"]
            .split(",")
            .map((scheme) => scheme.trim())
            .filter((scheme) => scheme !== ""),
        }),
    // Masked as given and at its real path: a link on the way leads commands there too.
    hiddenFiles: tokenFile === undefined ? [] : [...new Set([tokenFile, realpathSync(tokenFile)])],
    // Its commands never run in warm sandboxes (each gets masks of its own), so none is started.
    commandWrapper: createCommandWrapper({ warmSandbox: false, ...parseReadFlags(values, io) }),
    onError: (error) =>
      io.stderr(`pleach sandbox: ${showControlCharacters(error.message, { multiline: true })}\n`),
  });
  io.stdout(`${server.url.href}\n`);
  const speaking = protocol === "e2b" ? ", E2B protocol" : "";
  io.stderr(`pleach sandbox: serving sandboxes (${mode}${speaking}) at ${server.url.href}\n`);
  await new Promise<void>((resolve) => {
    if (stopSignal !== undefined) {
      if (stopSignal.aborted) resolve();
      stopSignal.addEventListener("abort", () => resolve(), { once: true });
      return;
    }
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  io.stderr("pleach sandbox: shutting down, killing running commands\n");
  await server.close();
  return 0;
}

function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (match === null || port > 65_535) {
    throw new UsageError(
      `--listen takes PORT or HOST:PORT (e.g. --listen 127.0.0.1:8700), got ${JSON.stringify(text)}`,
      { command: "sandbox" },
    );
  }
  return { host: match[1]?.replace(/^\[|\]$/g, "") ?? "127.0.0.1", port };
}
