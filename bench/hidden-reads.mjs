// What finding the hidden paths costs, fresh as every call finds them: `hiddenReads` in the host
// scope (what a command is confined by) and in the workspace scope (what the file tools judge a
// workspace path by), for a workspace in the temporary folder. Interleaved calls, medians.
// Run as root it includes the other users' homes; the figures depend on the size of /etc.
//
//   npx tsc -b && node bench/hidden-reads.mjs [calls]
//
// PLEACH_BUILDS="before=/path/to/packages/sandbox/dist/index.js,..." adds the same calls for other
// builds, interleaved with this one's (a build without scopes answers for the host scope), and
// checks that each gives the same hidden paths.
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const CALLS = Math.max(50, Number(process.argv[2] ?? 300));
const builds = [["this", new URL("../packages/sandbox/dist/index.js", import.meta.url).href]];
for (const each of (process.env.PLEACH_BUILDS ?? "").split(",").filter(Boolean)) {
  const [label, file] = each.split("=");
  builds.push([label, new URL(`file://${path.resolve(file)}`).href]);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-hidden-")));
try {
  const rows = [];
  for (const [label, href] of builds) {
    const { hiddenReads } = await import(href);
    for (const scope of label === "this" ? ["host", "workspace"] : ["host"]) {
      rows.push({ name: `${label} ${scope}`, call: () => hiddenReads({ root, scope }), times: [] });
    }
  }
  const expected = JSON.stringify(rows[0].call());
  for (const row of rows.filter((each) => each.name.endsWith(" host"))) {
    if (JSON.stringify(row.call()) !== expected) throw new Error(`${row.name} hides other paths`);
  }
  for (let call = 0; call < CALLS; call += 1) {
    for (const row of rows) {
      const started = performance.now();
      row.call();
      row.times.push(performance.now() - started);
    }
  }
  console.log(
    `${CALLS} interleaved calls, uid ${process.getuid?.()}, load ${os.loadavg()[0].toFixed(1)}`,
  );
  const host = median(rows[0].times);
  for (const row of rows) {
    const value = median(row.times);
    console.log(
      `  ${row.name.padEnd(20)} ${value.toFixed(3).padStart(8)} ms  ${(value / host).toFixed(2)}x this host`,
    );
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
