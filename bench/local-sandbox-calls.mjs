// What a command costs through the public API alone (`createLocalSandbox`, as a user drives it),
// beside `find` over the same tree, in workspaces of 20,000 and 100,000 folders and a small one,
// with 2 s idle between calls (a model's turn). Medians and ratios, the baselines in the same run.
// Needs the build (npx tsc -b) and a working /usr/bin/bwrap.
//
//   node bench/local-sandbox-calls.mjs [runs] [idle-seconds] [folders,folders]
//
// PLEACH_BUILDS="before=/path/to/dist/index.js,..." adds the same rows for other builds,
// interleaved with this one's, so that a before/after comparison shares the machine's load.
//
// Rows, per workspace:
//   find               /usr/bin/find over the workspace (the kernel's floor for reading its folders)
//   first call         a fresh process's first exec("true") (createLocalSandbox then exec, timed
//                      in the child, Node's start and imports left out)
//   warm call          exec("true") on a client that ran one before, after the idle time
//   warm, session      the same on a `session: true` client
//   bare bwrap         bwrap --ro-bind / / --dev /dev true (small workspace only)
// Targets (issue 28): warm call ≤ 0.75x find, first call ≤ 2x find (big workspaces); warm,
// session ≤ 1.5x bare bwrap (small workspace).
import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const runs = Number(process.argv[2] ?? 7);
const idleMs = Number(process.argv[3] ?? 2) * 1000;
const sizes = (process.argv[4] ?? "20000,100000").split(",").map(Number);

const builds = [["this", new URL("../packages/sandbox/dist/index.js", import.meta.url).href]];
for (const each of (process.env.PLEACH_BUILDS ?? "").split(",").filter(Boolean)) {
  const [label, file] = each.split("=");
  builds.push([label, new URL(`file://${path.resolve(file)}`).href]);
}
const loaded = [];
for (const [label, href] of builds) {
  const sandbox = await import(href).catch((error) => {
    console.error(`cannot load ${href} (build first: npx tsc -b): ${error.message}`);
    process.exit(2);
  });
  loaded.push({ label, href, sandbox });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

function spawnAndWait(file, args, options = {}) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "inherit"], ...options });
    let out = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve({ ms: performance.now() - started, out })
        : reject(new Error(`${file} exited ${code}`)),
    );
  });
}

const roots = [];
async function workspace(folders) {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-calls-")));
  roots.push(root);
  execFileSync("git", ["init", "-q", root]);
  execFileSync("git", ["init", "-q", path.join(root, "vendor", "lib")]);
  for (const folder of ["src", "test", "docs"]) {
    await mkdir(path.join(root, folder, "nested"), { recursive: true });
  }
  // A node_modules of packages of 50 folders each.
  for (let index = 0; index < Math.ceil(folders / 50); index += 1) {
    const lib = path.join(root, "node_modules", `package-${index}`, "lib");
    const made = [];
    for (let folder = 0; folder < 48; folder += 1) {
      made.push(mkdir(path.join(lib, `d${folder}`), { recursive: true }));
    }
    await Promise.all(made);
  }
  return root;
}

async function timedExec(client) {
  const started = performance.now();
  const result = await client.exec("true");
  if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}: ${result.stderr}`);
  return performance.now() - started;
}

const FIRST_CALL = `
const { createLocalSandbox } = await import(process.argv[1]);
const started = performance.now();
const client = await createLocalSandbox({ root: process.argv[2] });
const result = await client.exec("true");
if (result.exitCode !== 0) throw new Error(result.stderr);
process.stdout.write(String(performance.now() - started));
await client.close();
`;

async function firstCall(href, root) {
  const { out } = await spawnAndWait(process.execPath, [
    "--input-type=module",
    "-e",
    FIRST_CALL,
    href,
    root,
  ]);
  return Number(out);
}

/** `items` from the one at `by` (modulo their number) on, then the ones before it. */
const rotated = (items, by) => {
  const at = by % items.length;
  return [...items.slice(at), ...items.slice(0, at)];
};

const rows = [];
function report(name, values, against) {
  const value = median(values);
  rows.push([name, value, against]);
  const ratio =
    against === undefined ? "" : `  ${(value / against.value).toFixed(2)}x ${against.name}`;
  console.log(`${name.padEnd(40)} ${value.toFixed(1).padStart(8)} ms${ratio}`);
  return { name, value };
}

const cases = [
  { folders: 0, label: "small" },
  ...sizes.map((folders) => ({ folders, label: `${folders}` })),
];
try {
  for (const { folders, label } of cases) {
    const root = await workspace(folders);
    const clients = [];
    for (const build of loaded) {
      for (const session of [false, true]) {
        const client = await build.sandbox.createLocalSandbox({ root, session });
        await timedExec(client);
        clients.push({ name: `${label} ${build.label} warm${session ? ", session" : ""}`, client });
      }
    }
    const samples = new Map(clients.map(({ name }) => [name, []]));
    const finds = [];
    const bare = [];
    const firsts = new Map(
      folders === 0 ? [] : loaded.map(({ label: build }) => [`${label} ${build} first call`, []]),
    );
    for (let run = 0; run < runs; run += 1) {
      finds.push((await spawnAndWait("/usr/bin/find", [root], { stdio: "ignore" })).ms);
      if (folders === 0) {
        bare.push(
          (await spawnAndWait("/usr/bin/bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "true"]))
            .ms,
        );
      }
      // Each run starts with another build, so that none always comes first after find.
      for (const { name, client } of rotated(clients, run * 2)) {
        await sleep(idleMs);
        samples.get(name).push(await timedExec(client));
      }
      if (folders > 0 && run < 3) {
        for (const build of rotated(loaded, run))
          firsts.get(`${label} ${build.label} first call`).push(await firstCall(build.href, root));
      }
    }
    const find = report(`${label} find`, finds);
    const bareRow = folders === 0 ? report(`${label} bare bwrap`, bare) : undefined;
    for (const [name, values] of samples) {
      report(name, values, name.includes("session") && bareRow !== undefined ? bareRow : find);
    }
    for (const [name, values] of firsts) report(name, values, find);
    for (const { client } of clients) await client.close();
  }
} finally {
  for (const root of roots) await rm(root, { recursive: true, force: true });
}
