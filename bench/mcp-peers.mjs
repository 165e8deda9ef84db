// Small calls side by side with the MCP filesystem server: a ~10 KB `read_file`, a one-line
// `edit_file` and a one-folder `list_files` over stdio, each server a child process driven by the
// official v2 client, on the same real checkout (webpack's published package, unpacked from the
// npm registry at run time), calls interleaved so that drift hits both alike. The filesystem
// server is installed from npm into a cache folder on first run.
//
// Run by hand after building: `npx tsc -b && node bench/mcp-peers.mjs [calls]`.
// PLEACH_BUILDS="before=/path/to/packages/cli/bin/pleach.js,..." adds the same calls to other
// builds' servers, interleaved with this one's (each edits a copy of its own), so that a
// before/after comparison shares the machine's load.
// Targets (issue 28): read and edit within 1.5x of the filesystem server's median, list within 5x.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const CALLS = Math.max(20, Number(process.argv[2] ?? 100));
const WARMUP = 10;
const FILESYSTEM_SERVER = "@modelcontextprotocol/server-filesystem@2026.8.31";
const CHECKOUT = "webpack@5.113.0";
const launcher = new URL("../packages/cli/bin/pleach.js", import.meta.url).pathname;
const otherBuilds = (process.env.PLEACH_BUILDS ?? "")
  .split(",")
  .filter(Boolean)
  .map((each) => each.split("="));
const cache = path.join(os.tmpdir(), "pleach-bench-peers");

/** Install `spec` into the cache (once) and return its folder. */
function installed(spec) {
  const prefix = path.join(cache, spec.replaceAll("/", "+"));
  if (!existsSync(path.join(prefix, "node_modules"))) {
    execFileSync("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", spec], {
      stdio: "ignore",
    });
  }
  return prefix;
}

/** A real checkout: the package's tarball from the registry, unpacked into `into`. */
function unpackCheckout(into) {
  const file = execFileSync("npm", ["pack", CHECKOUT, "--silent"], { cwd: into, encoding: "utf8" })
    .trim()
    .split("\n")
    .at(-1);
  execFileSync("tar", ["-xzf", file, "--strip-components=1"], { cwd: into });
  execFileSync("rm", ["-f", file], { cwd: into });
  execFileSync("git", ["init", "-q"], { cwd: into });
}

/** The file of `folder` whose size is closest to `bytes`. */
function fileNear(root, folder, bytes) {
  const files = readdirSync(path.join(root, folder))
    .map((name) => path.join(folder, name))
    .filter((file) => statSync(path.join(root, file)).isFile());
  files.sort(
    (a, b) =>
      Math.abs(statSync(path.join(root, a)).size - bytes) -
      Math.abs(statSync(path.join(root, b)).size - bytes),
  );
  return files[0];
}

async function connect(command, args) {
  const client = new Client({ name: "pleach-bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
  await client.listTools();
  return client;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-peers-")));
const clients = [];
try {
  await mkdir(cache, { recursive: true });
  const filesystemServer = path.join(
    installed(FILESYSTEM_SERVER),
    "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
  );
  unpackCheckout(root);
  const readTarget = fileNear(root, "lib", 10_000);
  const editTarget = fileNear(root, "lib", 6_000);
  const lines = (await readFile(path.join(root, editTarget), "utf8")).split("\n");
  const line = lines.find(
    (each) => each.trim().length > 20 && lines.indexOf(each) === lines.lastIndexOf(each),
  );
  // The filesystem server edits a copy of its own, so that each server's edits undo its own.
  const peerEditTarget = `${editTarget}.peer.js`;
  await copyFile(path.join(root, editTarget), path.join(root, peerEditTarget));
  const pleach = await connect(process.execPath, [launcher, "mcp", "--workspace", root]);
  const filesystem = await connect(process.execPath, [filesystemServer, root]);
  clients.push(pleach, filesystem);
  // Each other build: its server, and a copy of the file to edit of its own.
  const others = [];
  for (const [label, otherLauncher] of otherBuilds) {
    const client = await connect(process.execPath, [otherLauncher, "mcp", "--workspace", root]);
    clients.push(client);
    const copy = `${editTarget}.${label}.js`;
    await copyFile(path.join(root, editTarget), path.join(root, copy));
    others.push({ label, client, editTarget: copy });
  }

  // Each case: the pleach call and the filesystem server's call for the same work.
  const cases = [
    {
      name: `read_file ${readTarget} (${statSync(path.join(root, readTarget)).size} bytes)`,
      target: 1.5,
      pleach: () => ({ name: "read_file", arguments: { path: readTarget } }),
      peer: () => ({ name: "read_text_file", arguments: { path: path.join(root, readTarget) } }),
    },
    {
      name: `edit_file one line of ${editTarget}`,
      target: 1.5,
      // Back and forth, so that every call finds its text.
      pleach: (call, target = editTarget) => ({
        name: "edit_file",
        arguments: {
          path: target,
          old: call % 2 === 0 ? line : `${line} `,
          new: call % 2 === 0 ? `${line} ` : line,
        },
      }),
      peer: (call) => ({
        name: "edit_file",
        arguments: {
          path: path.join(root, peerEditTarget),
          edits: [
            {
              oldText: call % 2 === 0 ? line : `${line} `,
              newText: call % 2 === 0 ? `${line} ` : line,
            },
          ],
        },
      }),
    },
    {
      name: "list_files of one folder (lib)",
      target: 5,
      pleach: () => ({ name: "list_files", arguments: { dir: "lib" } }),
      peer: () => ({ name: "list_directory", arguments: { path: path.join(root, "lib") } }),
    },
  ];

  console.log(
    `${CALLS} interleaved calls per case over stdio, ${CHECKOUT} unpacked, ${FILESYSTEM_SERVER} (Node ${process.version})`,
  );
  let met = true;
  for (const each of cases) {
    const times = { pleach: [], peer: [], ...Object.fromEntries(others.map((o) => [o.label, []])) };
    const callers = [
      ["pleach", pleach, (call) => each.pleach(call)],
      ["peer", filesystem, (call) => each.peer(call)],
      ...others.map((other) => [
        other.label,
        other.client,
        (call) => each.pleach(call, other.editTarget),
      ]),
    ];
    for (let call = 0; call < WARMUP + CALLS; call += 1) {
      for (const [who, client, make] of callers) {
        const request = make(call);
        const started = performance.now();
        const result = await client.callTool(request);
        const ms = performance.now() - started;
        if (result.isError) {
          throw new Error(`${who} ${request.name} failed: ${JSON.stringify(result).slice(0, 400)}`);
        }
        if (call >= WARMUP) times[who].push(ms);
      }
    }
    const ratio = median(times.pleach) / median(times.peer);
    met &&= ratio <= each.target;
    console.log(
      `  ${each.name.padEnd(62)} pleach ${median(times.pleach).toFixed(2)} ms  filesystem ${median(times.peer).toFixed(2)} ms  ratio ${ratio.toFixed(2)}x (target <= ${each.target}x)`,
    );
    for (const { label } of others) {
      const other = median(times[label]);
      console.log(
        `  ${"".padEnd(62)} ${label} ${other.toFixed(2)} ms  ratio ${(other / median(times.peer)).toFixed(2)}x`,
      );
    }
  }
  console.log(met ? "all targets met" : "some targets missed");
} finally {
  for (const client of clients) await client.close().catch(() => {});
  await rm(root, { recursive: true, force: true });
}
