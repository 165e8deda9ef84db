// What one `exec` costs beyond starting the process: `client.exec("true")` on a local
// danger-full-access sandbox against a raw `spawn('/bin/bash', ['-c', 'true'])` with the same
// stdio piping (stdin ignored, stdout and stderr read to their end), measured in the same run,
// interleaved, as medians. Needs the build.
//
//   npx tsc -b && node bench/exec-overhead.mjs [runs] [other-build/packages/sandbox/dist/index.js]
//
// With a second build (say a copy of the tree at another commit, built), its `client.exec` is
// measured in the same loop too, for a before/after comparison free of the machine's drift.
import { spawn } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const runs = Math.max(50, Number(process.argv[2] ?? 200));
const other = process.argv[3] && pathToFileURL(path.resolve(process.argv[3]));
const { createLocalSandbox } = await import(
  new URL("../packages/sandbox/dist/index.js", import.meta.url)
).catch((error) => {
  console.error("build first (npx tsc -b):", error.message);
  process.exit(2);
});
const otherBuild = other ? await import(other) : undefined;

function rawSpawn() {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/bash", ["-c", "true"], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", () => {});
    child.stderr.on("data", () => {});
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
}

async function time(run) {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-")));
try {
  const client = await createLocalSandbox({ root, mode: "danger-full-access" });
  const execTrue = (sandbox) => async () => {
    const result = await sandbox.exec("true");
    if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}`);
  };
  const cases = {
    "raw spawn bash -c true": rawSpawn,
    'client.exec("true")': execTrue(client),
  };
  if (otherBuild) {
    const sandbox = await otherBuild.createLocalSandbox({ root, mode: "danger-full-access" });
    cases['other build: client.exec("true")'] = execTrue(sandbox);
  }
  // Warm up both paths (module code, the first spawns) before measuring.
  for (let i = 0; i < 10; i++) for (const run of Object.values(cases)) await run();
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let i = 0; i < runs; i++) {
    // Rotate which case goes first so that none always follows another.
    const entries = Object.entries(cases);
    const order = [...entries.slice(i % entries.length), ...entries.slice(0, i % entries.length)];
    for (const [name, run] of order) samples[name].push(await time(run));
  }
  const baseline = median(samples["raw spawn bash -c true"]);
  console.log(`node ${process.version}; ${runs} interleaved runs each; medians`);
  console.table(
    Object.entries(samples).map(([name, values]) => ({
      case: name,
      "median ms": median(values).toFixed(3),
      "p10 ms": [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.1)].toFixed(3),
      "p90 ms": [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)].toFixed(3),
      "vs raw": `${(median(values) / baseline).toFixed(2)}x`,
      "extra ms": (median(values) - baseline).toFixed(3),
    })),
  );
  if (otherBuild) {
    // Each run's pair was measured back to back: the median of their differences shrugs off drift.
    const ours = samples['client.exec("true")'];
    const theirs = samples['other build: client.exec("true")'];
    const paired = median(ours.map((value, index) => value - theirs[index]));
    console.log(`median paired difference, this build minus the other: ${paired.toFixed(3)} ms`);
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
