// How much the OS sandbox costs per command: `true` through pleach's full bubblewrap argv, against
// bare bubblewrap with a minimal argument set and a raw spawn of /bin/true, measured in the same
// run, interleaved, as medians. Needs the build (npx tsc -b) and a working /usr/bin/bwrap.
//
//   node bench/sandbox-exec.mjs [runs]
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const runs = Number(process.argv[2] ?? 50);
const { createCommandWrapper, probeSandboxBackend } = await import(
  new URL("../packages/sandbox/dist/os/index.js", import.meta.url)
).catch((error) => {
  console.error("build first (npx tsc -b):", error.message);
  process.exit(2);
});

const probe = await probeSandboxBackend({ backend: "bubblewrap" });
if (!probe.available) {
  console.error(`no working bubblewrap: ${probe.reason}`);
  process.exit(2);
}

// A small but realistic workspace: a repository with a nested one and a few folders.
async function workspace() {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-")));
  execFileSync("git", ["init", "-q", root]);
  execFileSync("git", ["init", "-q", path.join(root, "vendor", "lib")]);
  for (const folder of ["src", "test", "docs"]) {
    execFileSync("mkdir", ["-p", path.join(root, folder, "nested")]);
    await writeFile(path.join(root, folder, "file.txt"), "x\n");
  }
  return root;
}

const wrapper = createCommandWrapper();
const request = (root) => ({
  command: "true",
  root,
  cwd: root,
  mode: "workspace-write",
  env: {},
  network: false,
});
// The argv alone, prepared once in a workspace of its own: holding its invocation keeps that
// workspace's placeholders alive, which the full-call variant must create and remove every time.
const fullRoot = await workspace();
const argvRoot = await workspace();
const precomputed = await wrapper.invocation(request(argvRoot));

function spawnAndWait(file, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: "ignore", detached: true });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited ${code}`)),
    );
  });
}

const variants = {
  "raw spawn /bin/true": () => spawnAndWait("/bin/true", [], {}),
  "bare bwrap (--ro-bind / / --dev /dev true)": () =>
    spawnAndWait("/usr/bin/bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "true"], {}),
  "pleach argv (wrapCommand output, prepared once)": () =>
    spawnAndWait(precomputed.file, precomputed.args, precomputed.env),
  "pleach full call (facts + placeholders + argv)": async () => {
    const invocation = await wrapper.invocation(request(fullRoot));
    try {
      await spawnAndWait(invocation.file, invocation.args, invocation.env);
    } finally {
      await invocation.release?.();
    }
  },
};

const names = Object.keys(variants);
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (const name of names) await variants[name](); // warm up
for (let run = 0; run < runs; run += 1) {
  for (let offset = 0; offset < names.length; offset += 1) {
    const name = names[(run + offset) % names.length];
    const started = performance.now();
    await variants[name]();
    samples[name].push(performance.now() - started);
  }
}
await precomputed.release?.();
for (const root of [fullRoot, argvRoot]) await rm(root, { recursive: true, force: true });

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const bare = median(samples[names[1]]);
const raw = median(samples[names[0]]);
console.log(
  `${runs} runs each, interleaved; uid ${process.getuid()}; bubblewrap ${execFileSync("/usr/bin/bwrap", ["--version"]).toString().trim()}`,
);
console.log(
  `${"variant".padEnd(50)}${"median ms".padStart(11)}${"vs bare bwrap".padStart(15)}${"vs raw".padStart(9)}`,
);
for (const name of names) {
  const value = median(samples[name]);
  console.log(
    `${name.padEnd(50)}${value.toFixed(2).padStart(11)}${`${(value / bare).toFixed(2)}x`.padStart(15)}${`${(value / raw).toFixed(1)}x`.padStart(9)}`,
  );
}
