#!/usr/bin/env node
// Run one sandbox server from the built packages (npx tsc -b first), for the fleet test, the
// bench and the container image: the same thing `pleach sandbox serve` runs.
//   PLEACH_SANDBOX_TOKEN=... node scripts/sandbox-serve.mjs --root DIR [--host H] [--port P]
//     [--mode M] [--max-sandboxes N] [--socket PATH] [--workspace DIR]
// --socket listens on a Unix socket instead of HOST:PORT; --workspace makes every sandbox's
// workspace that one folder (a container hosting one sandbox over a mounted folder).
// Prints the server's URL as its first line of stdout; stops on SIGTERM/SIGINT.
import path from "node:path";
import { parseArgs } from "node:util";

const here = path.dirname(new URL(import.meta.url).pathname);
const { values } = parseArgs({
  options: {
    root: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    mode: { type: "string", default: "workspace-write" },
    "max-sandboxes": { type: "string", default: "64" },
    "token-file": { type: "string" },
    socket: { type: "string" },
    "socket-mode": { type: "string", default: "600" },
    workspace: { type: "string" },
    dist: { type: "string", default: path.join(here, "../packages/sandbox/dist/index.js") },
  },
});
const { createSandboxServer } = await import(values.dist);
let token = process.env.PLEACH_SANDBOX_TOKEN;
// Commands inherit this process's environment in danger-full-access: the token is not theirs.
delete process.env.PLEACH_SANDBOX_TOKEN;
if (values["token-file"] !== undefined) {
  const { readFile } = await import("node:fs/promises");
  token = (await readFile(values["token-file"], "utf8")).trim();
}
const server = await createSandboxServer({
  root: values.root ?? "/tmp/pleach-sandboxes",
  token,
  host: values.host,
  port: Number(values.port),
  ...(values.socket === undefined
    ? {}
    : { socketPath: values.socket, socketMode: Number.parseInt(values["socket-mode"], 8) }),
  ...(values.workspace === undefined ? {} : { workspacePath: () => values.workspace }),
  mode: values.mode,
  maxSandboxes: Number(values["max-sandboxes"]),
  hiddenFiles: values["token-file"] === undefined ? [] : [values["token-file"]],
  onError: (error) => process.stderr.write(`sandbox server: ${error.message}\n`),
});
process.stdout.write(`${server.url.href}\n`);
const stop = async () => {
  await server.close();
  process.exit(0);
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
