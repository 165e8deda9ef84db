#!/usr/bin/env node
// Run one sandbox server from the built packages (npx tsc -b first), for the fleet test, the
// bench and the container image: the same thing `pleach sandbox serve` runs.
//   node scripts/sandbox-serve.mjs --root DIR --token-file FILE [--remove-token-file] [--host H]
//     [--port P] [--mode M] [--network] [--max-sandboxes N] [--socket PATH] [--workspace DIR]
//     [--exit-with-stdin] [--no-caches]
// The token comes from --token-file (with --remove-token-file, the file is removed once read, so
// that the token lives only in this process's memory) or, for tests, PLEACH_SANDBOX_TOKEN.
// --socket listens on a Unix socket instead of HOST:PORT; --workspace makes every sandbox's
// workspace that one folder (a container hosting one sandbox over a mounted folder): it is never
// removed, and never destroyed for being idle. --exit-with-stdin stops the server when its stdin
// ends (the Docker provider holds the other end: the container goes with its owner).
// Prints the server's URL as its first line of stdout; stops on SIGTERM/SIGINT.
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";

const here = path.dirname(new URL(import.meta.url).pathname);
const { values } = parseArgs({
  options: {
    root: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    mode: { type: "string", default: "workspace-write" },
    network: { type: "boolean", default: false },
    "max-sandboxes": { type: "string", default: "64" },
    "token-file": { type: "string" },
    "remove-token-file": { type: "boolean", default: false },
    socket: { type: "string" },
    "socket-mode": { type: "string", default: "600" },
    workspace: { type: "string" },
    "exit-with-stdin": { type: "boolean", default: false },
    // The sandbox's commands get no kept caches (a container's user may have no home for them).
    "no-caches": { type: "boolean", default: false },
    dist: { type: "string", default: path.join(here, "../packages/sandbox/dist/index.js") },
  },
});
const { createCommandWrapper, createSandboxServer } = await import(values.dist);
let token = process.env.PLEACH_SANDBOX_TOKEN;
// Commands inherit this process's environment in danger-full-access: the token is not theirs.
// (The process's initial environment in /proc/<pid>/environ keeps it: use --token-file.)
delete process.env.PLEACH_SANDBOX_TOKEN;
const hiddenFiles = [];
if (values["token-file"] !== undefined) {
  token = (await readFile(values["token-file"], "utf8")).trim();
  if (values["remove-token-file"]) await rm(values["token-file"]);
  else hiddenFiles.push(values["token-file"]);
}

// A bound workspace (the user's own files, outside the root) is never removed by the server.
const workspacePath = values.workspace === undefined ? undefined : () => values.workspace;
const server = await createSandboxServer({
  root: values.root ?? "/tmp/pleach-sandboxes",
  token,
  host: values.host,
  port: Number(values.port),
  ...(values.socket === undefined
    ? {}
    : { socketPath: values.socket, socketMode: Number.parseInt(values["socket-mode"], 8) }),
  ...(workspacePath === undefined
    ? {}
    : { workspacePath, idleTimeoutMs: Number.POSITIVE_INFINITY }),
  mode: values.mode,
  network: values.network,
  maxSandboxes: Number(values["max-sandboxes"]),
  hiddenFiles,
  ...(values["no-caches"]
    ? { commandWrapper: createCommandWrapper({ warmSandbox: false, caches: false }) }
    : {}),
  onError: (error) => process.stderr.write(`sandbox server: ${error.message}\n`),
});
process.stdout.write(`${server.url.href}\n`);
let stopping;
const stop = () => {
  // close() waits for aborted commands to end, and for the looks at what they made.
  stopping ??= server.close().then(() => process.exit(0));
  return stopping;
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
if (values["exit-with-stdin"]) {
  process.stdin.on("end", stop);
  process.stdin.on("error", stop);
  process.stdin.resume();
}
