#!/usr/bin/env node
// Run one sandbox server from the built packages (npx tsc -b first), for the fleet test, the
// bench and the container image: the same thing `pleach sandbox serve` runs.
//   node scripts/sandbox-serve.mjs --root DIR --token-file FILE [--remove-token-file] [--host H]
//     [--port P] [--mode M] [--network] [--max-sandboxes N] [--socket PATH] [--workspace DIR]
//     [--exit-with-stdin]
// The token comes from --token-file (with --remove-token-file, the file is removed once read, so
// that the token lives only in this process's memory) or, for tests, PLEACH_SANDBOX_TOKEN.
// --socket listens on a Unix socket instead of HOST:PORT; --workspace makes every sandbox's
// workspace that one folder (a container hosting one sandbox over a mounted folder): it is never
// removed, and never destroyed for being idle. --exit-with-stdin stops the server when its stdin
// ends (the Docker provider holds the other end: the container goes with its owner).
// Prints the server's URL as its first line of stdout; stops on SIGTERM/SIGINT.
import { mkdtempSync, symlinkSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import os from "node:os";
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

// The server removes a sandbox's workspace folder when it destroys the sandbox. A bound workspace
// (the user's own files) must survive that: the server is given a symbolic link to it, which is
// what gets removed.
let workspacePath;
if (values.workspace !== undefined) {
  const bound = values.workspace;
  const links = mkdtempSync(path.join(os.tmpdir(), "pleach-bound-"));
  workspacePath = (id) => {
    const link = path.join(links, id);
    symlinkSync(bound, link);
    return link;
  };
}

// The host's wrapper, counting the commands whose sandbox is not yet gone: on the way out, the
// server waits for them (a command aborted by a client that went away may still be ending), so
// that every placeholder folder they held in a bound workspace is removed before it exits.
const baseWrapper = createCommandWrapper();
let running = 0;
let allDone = () => {};
const commandWrapper = {
  backend: baseWrapper.backend,
  close: () => baseWrapper.close(),
  protection: (root) => baseWrapper.protection(root),
  async invocation(request) {
    const invocation = await baseWrapper.invocation(request);
    if (invocation.release === undefined) return invocation;
    running += 1;
    let released = false;
    return {
      ...invocation,
      async release() {
        try {
          await invocation.release();
        } finally {
          if (!released) {
            released = true;
            running -= 1;
            if (running === 0) allDone();
          }
        }
      },
    };
  },
};

const server = await createSandboxServer({
  commandWrapper,
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
  onError: (error) => process.stderr.write(`sandbox server: ${error.message}\n`),
});
process.stdout.write(`${server.url.href}\n`);
let stopping;
const stop = () => {
  stopping ??= (async () => {
    await server.close();
    if (running > 0) {
      await Promise.race([
        new Promise((resolve) => {
          allDone = resolve;
        }),
        new Promise((resolve) => setTimeout(resolve, 5_000)),
      ]);
    }
    await commandWrapper.close();
    process.exit(0);
  })();
  return stopping;
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
if (values["exit-with-stdin"]) {
  process.stdin.on("end", stop);
  process.stdin.on("error", stop);
  process.stdin.resume();
}
