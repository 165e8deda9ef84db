// What a domain list costs per command: `true` through createLocalSandbox with the network off
// (in a warm sandbox, as back-to-back calls run, and in a sandbox of its own), against the same
// with `network: { allowDomains }` (always a sandbox of its own, plus its proxy on the host and the
// Perl forwarder started in the sandbox before the command), and with `network: true`, which under
// bubblewrap takes the same path allowing every name; and both again in a session (`session: true`,
// as `pleach mcp` runs), whose commands run in its session sandbox through the proxy and forwarder
// it holds for its life. Interleaved runs in one process, medians.
// Needs the build (npx tsc -b) and a working /usr/bin/bwrap.
//
//   node bench/domain-network.mjs [runs]
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const runs = Number(process.argv[2] ?? 30);
const sandbox = await import(
  new URL("../packages/sandbox/dist/index.js", import.meta.url).href
).catch((error) => {
  console.error(`build first (npx tsc -b): ${error.message}`);
  process.exit(2);
});
const probe = await sandbox.probeSandboxBackend({ backend: "bubblewrap" });
if (!probe.available) {
  console.error(`no working bubblewrap: ${probe.reason}`);
  process.exit(2);
}

const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-net-")));
const rows = {
  "network off, warm sandbox": await sandbox.createLocalSandbox({ root }),
  "network off, own sandbox": await sandbox.createLocalSandbox({
    root,
    commandWrapper: sandbox.createCommandWrapper({ warmSandbox: false }),
  }),
  "domain list": await sandbox.createLocalSandbox({
    root,
    network: { allowDomains: ["registry.npmjs.org"] },
  }),
  "whole network": await sandbox.createLocalSandbox({ root, network: true }),
  "network off, session": await sandbox.createLocalSandbox({ root, session: true }),
  "domain list, session": await sandbox.createLocalSandbox({
    root,
    network: { allowDomains: ["registry.npmjs.org"] },
    session: true,
  }),
  "whole network, session": await sandbox.createLocalSandbox({
    root,
    network: true,
    session: true,
  }),
};
const times = Object.fromEntries(Object.keys(rows).map((name) => [name, []]));
for (let run = 0; run < runs + 3; run += 1) {
  for (const [name, client] of Object.entries(rows)) {
    const started = performance.now();
    const result = await client.exec("true");
    const elapsed = performance.now() - started;
    if (result.exitCode !== 0) throw new Error(`${name}: ${result.stderr}`);
    // The first runs warm the caches (host facts, the warm sandbox).
    if (run >= 3) times[name].push(elapsed);
  }
}
for (const client of Object.values(rows)) await client.close();
await rm(root, { recursive: true, force: true });

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const base = median(times["network off, own sandbox"]);
console.log(`${runs} runs each, interleaved; medians`);
for (const [name, values] of Object.entries(times)) {
  const value = median(values);
  console.log(
    `${name.padEnd(28)} ${value.toFixed(1).padStart(7)} ms  ${(value / base).toFixed(2)}x own sandbox`,
  );
}
