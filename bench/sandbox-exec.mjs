// What the OS sandbox costs per command: `true` run through pleach's bubblewrap wrapper, against a
// raw spawn, bare bubblewrap with a minimal argument set, and bubblewrap with only the flags the
// sandbox spec requires (the floor any implementation pays). Interleaved runs in the same process,
// medians. Needs the build (npx tsc -b) and a working /usr/bin/bwrap.
//
//   node bench/sandbox-exec.mjs [runs] [big-tree-folders]
//
// PLEACH_SANDBOX_BASELINE=/path/to/other/dist/index.js adds the same pleach rows for another
// build (say, a copy of dist made before a change), interleaved with this one's, so that a
// before/after comparison shares the machine's load.
//
// Rows:
//   raw spawn          /bin/true, no sandbox
//   bare bwrap         bwrap --ro-bind / / --dev /dev true
//   spec floor         + new session, die with parent, user ns with caps dropped and nested user ns
//                      disabled, pid/ipc/uts/net ns, own /proc, private /tmp, workspace bound rw
//   ... via bash       the floor running `/bin/bash -c true`, as pleach runs every command
//   argv only          wrapCommand's argv for a small repository, prepared once
//   full call          invocation() (host facts, placeholders, argv) + run + release through one
//                      wrapper (its cache warm): "back to back" runs in the warm sandbox kept up
//                      since the previous call (within warmIdleMs; see warmSandbox),
//                      "idle 0" builds a sandbox of its own, making and removing the placeholders,
//                      around every call
//   big tree           a full call in a workspace of `big-tree-folders` folders (a node_modules),
//                      its walk kept current by the folders' stamps
//   first call         the same on a fresh wrapper with a fresh host-facts cache, as a new
//                      process makes it, walking the whole tree (5 runs, after); then find over
//                      the big tree, the kernel's floor for reading its folders
//
// Then the big tree's warm call against the small workspace's ("full call, back to back"), and
// the first call, each against its target.
import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const runs = Number(process.argv[2] ?? 50);
const bigTreeFolders = Number(process.argv[3] ?? 20_000);

async function load(specifier) {
  return import(specifier).catch((error) => {
    console.error(`cannot load ${specifier} (build first: npx tsc -b): ${error.message}`);
    process.exit(2);
  });
}

/**
 * A build of @pleach/sandbox (its dist/index.js), with two internals: the host-facts cache
 * (os/host-facts.js) and the warm sandbox's runner (os/session-run.js; builds before the
 * invocation union ran it as `invocation.warm.run`).
 */
async function loadBuild(index) {
  const build = await load(index);
  const { createHostFactsCache } = await load(new URL("./os/host-facts.js", index).href);
  const sessionRun = await import(new URL("./os/session-run.js", index).href).catch(
    () => undefined,
  );
  return { ...build, createHostFactsCache, runWarm: sessionRun?.runWarm };
}

const current = await loadBuild(new URL("../packages/sandbox/dist/index.js", import.meta.url).href);
const baselinePath = process.env.PLEACH_SANDBOX_BASELINE;
const baseline =
  baselinePath === undefined
    ? undefined
    : await loadBuild(new URL(path.resolve(baselinePath), "file:///").href);

const probe = await current.probeSandboxBackend({ backend: "bubblewrap" });
if (!probe.available) {
  console.error(`no working bubblewrap: ${probe.reason}`);
  process.exit(2);
}

const roots = [];

/** A small but realistic workspace: a repository with a nested one and a few folders. */
async function workspace() {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-")));
  roots.push(root);
  execFileSync("git", ["init", "-q", root]);
  execFileSync("git", ["init", "-q", path.join(root, "vendor", "lib")]);
  for (const folder of ["src", "test", "docs"]) {
    await mkdir(path.join(root, folder, "nested"), { recursive: true });
    await writeFile(path.join(root, folder, "file.txt"), "x\n");
  }
  return root;
}

/** The small workspace plus a node_modules of about `folders` folders: packages of 50 each. */
async function bigWorkspace(folders) {
  const root = await workspace();
  const packages = Math.ceil(folders / 50);
  for (let index = 0; index < packages; index += 1) {
    const lib = path.join(root, "node_modules", `package-${index}`, "lib");
    for (let folder = 0; folder < 48; folder += 1) {
      await mkdir(path.join(lib, `d${folder}`), { recursive: true });
      await writeFile(path.join(lib, `d${folder}`, "index.js"), "x\n");
    }
  }
  return root;
}

function folderCount(root) {
  const script = 'find "$1" -name .git -prune -o -type d -print | wc -l';
  return Number(execFileSync("sh", ["-c", script, "sh", root]).toString().trim());
}

const request = (root) => ({
  command: "true",
  root,
  cwd: root,
  mode: "workspace-write",
  env: {},
  network: false,
});

function spawnAndWait(file, args, env, inputs = []) {
  return new Promise((resolve, reject) => {
    // An invocation's inputs (bubblewrap's seccomp filter) go to fds 3 and up, as pipes.
    const stdio = ["ignore", "ignore", "ignore", ...inputs.map(() => "pipe")];
    const child = spawn(file, args, { env, stdio, detached: true });
    for (const [index, data] of inputs.entries()) child.stdio[3 + index].end(data).resume();
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited ${code}`)),
    );
  });
}

async function fullCall(build, wrapper, root) {
  const invocation = await wrapper.invocation(request(root));
  try {
    // A warm sandbox runs the command when one is ready (see the wrapper's `warmSandbox`).
    const options = { timeoutMs: 60_000, maxOutputBytes: 1_000_000 };
    const warm =
      invocation.kind === "session" && invocation.warm !== undefined
        ? build.runWarm(invocation.warm, invocation.command, options)
        : invocation.warm?.run?.(options);
    if (warm === undefined) {
      await spawnAndWait(invocation.file, invocation.args, invocation.env, invocation.inputs);
    } else if ((await warm).exitCode !== 0) throw new Error("true failed in the warm sandbox");
  } finally {
    await invocation.release?.();
  }
}

/** The pleach rows of one build, each in workspaces of its own (placeholders are per build). */
async function pleachVariants(build, prefix) {
  const [smallRoot, eagerRoot, argvRoot, bigRoot] = [
    await workspace(),
    await workspace(),
    await workspace(),
    await bigWorkspace(bigTreeFolders),
  ];
  // Rounds are interleaved, so "back to back" needs an idle time longer than a round.
  const wrapper = build.createCommandWrapper({ warmIdleMs: 600_000 });
  const eagerWrapper = build.createCommandWrapper({ warmIdleMs: 0 });
  const bigWrapper = build.createCommandWrapper({ warmIdleMs: 600_000 });
  // Holding this invocation keeps its placeholders alive for the argv-only row.
  const precomputed = await wrapper.invocation(request(argvRoot));
  const folders = folderCount(bigRoot);
  return {
    bigRoot,
    variants: {
      [`${prefix}argv only (prepared once)`]: () =>
        spawnAndWait(precomputed.file, precomputed.args, precomputed.env, precomputed.inputs),
      [`${prefix}full call, back to back`]: () => fullCall(build, wrapper, smallRoot),
      [`${prefix}full call, warmIdleMs 0`]: () => fullCall(build, eagerWrapper, eagerRoot),
      [`${prefix}big tree (${folders} folders)`]: () => fullCall(build, bigWrapper, bigRoot),
    },
    /** First calls on the big tree, as a new process makes them (walking the whole tree). */
    async coldCalls(count) {
      const times = [];
      for (let run = 0; run < count; run += 1) {
        const hostFactsCache = build.createHostFactsCache();
        const fresh = build.createCommandWrapper({ warmIdleMs: 0, hostFactsCache });
        const started = performance.now();
        await fullCall(build, fresh, bigRoot);
        times.push(performance.now() - started);
        await fresh.close?.();
        hostFactsCache.close?.();
      }
      return { name: `${prefix}first call, big tree`, times };
    },
    async close() {
      await precomputed.release?.();
      for (const each of [wrapper, eagerWrapper, bigWrapper]) await each.close?.();
    },
  };
}

const floorRoot = await workspace();
const floorArgs = [
  "--new-session",
  "--die-with-parent",
  "--unshare-user",
  ...(probe.bubblewrap.disableUserNamespaces ? ["--disable-userns"] : []),
  "--cap-drop",
  "ALL",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-net",
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/tmp",
  "--bind",
  floorRoot,
  floorRoot,
];

const RAW = "raw spawn /bin/true";
const BARE = "bare bwrap (--ro-bind / / --dev /dev)";
const FLOOR = "spec floor (required flags only)";
const FLOOR_BASH = "spec floor, via /bin/bash -c";
const builds = [await pleachVariants(current, "pleach ")];
if (baseline !== undefined) builds.push(await pleachVariants(baseline, "before: "));
const variants = {
  [RAW]: () => spawnAndWait("/bin/true", [], {}),
  [BARE]: () =>
    spawnAndWait("/usr/bin/bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "true"], {}),
  [FLOOR]: () => spawnAndWait("/usr/bin/bwrap", [...floorArgs, "true"], {}),
  [FLOOR_BASH]: () => spawnAndWait("/usr/bin/bwrap", [...floorArgs, "/bin/bash", "-c", "true"], {}),
  ...Object.assign({}, ...builds.map((build) => build.variants)),
};

const names = Object.keys(variants);
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (const name of names) await variants[name](); // warm up: probe, first walks
for (let run = 0; run < runs; run += 1) {
  for (let offset = 0; offset < names.length; offset += 1) {
    const name = names[(run + offset) % names.length];
    const started = performance.now();
    await variants[name]();
    samples[name].push(performance.now() - started);
  }
}
const cold = [];
for (const build of builds) {
  cold.push(await build.coldCalls(5));
}
// The kernel's floor for reading the big tree's folders: find, as the walk reads them.
const findTimes = [];
for (let run = 0; run < 3; run += 1) {
  const started = performance.now();
  folderCount(builds[0].bigRoot);
  findTimes.push(performance.now() - started);
}
cold.push({ name: "find over the big tree (kernel floor)", times: findTimes });
for (const build of builds) await build.close();
for (const root of roots) await rm(root, { recursive: true, force: true });

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const raw = median(samples[RAW]);
const bare = median(samples[BARE]);
const floor = median(samples[FLOOR]);
console.log(
  `${runs} runs each, interleaved, medians (cold: 5 runs); uid ${process.getuid()}; ${execFileSync("/usr/bin/bwrap", ["--version"]).toString().trim()}; ${os.cpus().length} CPUs; load ${os.loadavg()[0].toFixed(1)}`,
);
const row = (name, value) =>
  `${name.padEnd(50)}${value.toFixed(2).padStart(9)}${[raw, bare, floor].map((base) => `${(value / base).toFixed(2)}x`.padStart(8)).join("")}`;
console.log(
  `${"variant".padEnd(50)}${"ms".padStart(9)}${"/raw".padStart(8)}${"/bare".padStart(8)}${"/floor".padStart(8)}`,
);
for (const name of names) console.log(row(name, median(samples[name])));
for (const { name, times } of cold) console.log(row(name, median(times)));
for (const [index, prefix] of ["pleach ", "before: "].slice(0, builds.length).entries()) {
  const small = median(samples[`${prefix}full call, back to back`]);
  const big = median(samples[Object.keys(builds[index].variants).at(-1)]);
  const walked = median(cold[index].times);
  const find = median(findTimes);
  console.log(
    `${prefix}big tree / small workspace, warm: ${(big / small).toFixed(2)}x; first call ${walked.toFixed(0)} ms walking, ${(walked / find).toFixed(2)}x find (${find.toFixed(0)} ms; target <= 2x)`,
  );
}
