// What a foreground command costs in a session sandbox that was idle for a while (the agent was
// thinking), against bare bubblewrap and against the same client without a session (a sandbox of
// its own per call, as after the warm sandbox's 200 ms), in one run: medians and ratios. Each
// measurement follows the same idle time (so runs take rows × idle seconds each).
// Needs the build (npx tsc -b) and a working /usr/bin/bwrap.
//
//   node bench/session-sandbox.mjs [runs] [idle-seconds]
//
// Rows:
//   bare bwrap         bwrap --ro-bind / / --dev /dev true, spawned and waited for
//   bare, via bash     the same running /bin/bash -c true, as pleach runs every command
//   no session         client.exec("true") on a client without a session, idle between calls
//   session, idle      client.exec("true") on a session client whose sandbox sat idle for the idle
//                      time (a background job running in it, as an agent's dev server would)
// Target (issue 16): session, idle ≤ 1.25 × bare bwrap.
import { spawn } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const runs = Number(process.argv[2] ?? 12);
const idleMs = Number(process.argv[3] ?? 5) * 1000;

const sandbox = await import(
  new URL("../packages/sandbox/dist/index.js", import.meta.url).href
).catch((error) => {
  console.error(`build first (npx tsc -b): ${error.message}`);
  process.exit(2);
});

function spawnAndWait(file, args) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`${file} exited ${code}`)),
    );
  });
}

async function timed(action) {
  const started = performance.now();
  const result = await action();
  if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}: ${result.stderr}`);
  return performance.now() - started;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const roots = [];
async function workspace() {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-session-")));
  roots.push(root);
  return root;
}

const plain = await sandbox.createLocalSandbox({ root: await workspace() });
const session = await sandbox.createLocalSandbox({ root: await workspace(), session: true });
if (session.jobs === undefined) {
  console.error("no session sandbox on this host (needs bubblewrap and /usr/bin/perl)");
  process.exit(2);
}
await session.jobs.start("sleep 3600");
// Warm-up: the first call of each walks its workspace and starts what it keeps.
await timed(() => plain.exec("true"));
await timed(() => session.exec("true"));
await spawnAndWait("/usr/bin/bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "true"]);

const rows = { "bare bwrap": [], "bare, via bash": [], "no session": [], "session, idle": [] };
const measure = {
  "bare bwrap": () =>
    spawnAndWait("/usr/bin/bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "true"]),
  "bare, via bash": () =>
    spawnAndWait("/usr/bin/bwrap", [
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "/bin/bash",
      "-c",
      "true",
    ]),
  "no session": () => timed(() => plain.exec("true")),
  "session, idle": () => timed(() => session.exec("true")),
};
// Every row is measured after the same idle time, in an order that turns each run, so that none
// gains from a machine the one before woke up.
const names = Object.keys(rows);
for (let run = 0; run < runs; run += 1) {
  for (let offset = 0; offset < names.length; offset += 1) {
    const name = names[(run + offset) % names.length];
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    rows[name].push(await measure[name]());
  }
}
await session.close();
for (const root of roots) await rm(root, { recursive: true, force: true });

console.log(
  `${runs} runs, ${idleMs / 1000} s idle before each measurement, load ${os.loadavg()[0].toFixed(2)}`,
);
for (const [name, values] of Object.entries(rows)) {
  console.log(`${name.padEnd(16)} median ${median(values).toFixed(2)} ms`);
}
const ratio = median(rows["session, idle"]) / median(rows["bare bwrap"]);
console.log(
  `session, idle / bare bwrap: ${ratio.toFixed(2)}× (target ≤ 1.25×) ${ratio <= 1.25 ? "met" : "NOT met"}`,
);
console.log(
  `session, idle / bare, via bash: ${(median(rows["session, idle"]) / median(rows["bare, via bash"])).toFixed(2)}×`,
);
console.log(
  `no session / session, idle: ${(median(rows["no session"]) / median(rows["session, idle"])).toFixed(2)}×`,
);
