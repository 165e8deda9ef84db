// Cost of going through the tools against doing the same thing directly, measured in one run:
//   read_file of a 1 MB text file   vs  fs.readFile(path, "utf8")
//   bash `true`                     vs  child_process.spawn("/bin/bash", ["-c", "true"])
// Runs are interleaved, in an order shuffled every round, so drift (CPU frequency, page cache,
// other load) and the leftovers of the case before hit every row alike.
//
// Run by hand after building: `npx tsc -b && node bench/read-bash.mjs [runs] [--before <folder>]`.
// Goal: read <= 1.2x. `--before` times an older build in the same rounds: a folder laid out like
// `packages/` with `coding-agent/dist` and `sandbox/dist` copied from that build (they still load
// the current `@pleach/core`).
import { spawn } from "node:child_process";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { createBashTool } from "../packages/coding-agent/dist/tools/bash/tool.js";
import { createReadFileTool } from "../packages/coding-agent/dist/tools/read-file/tool.js";
import { createLocalSandbox } from "../packages/sandbox/dist/index.js";

const beforeAt = process.argv.indexOf("--before");
const before = beforeAt === -1 ? undefined : path.resolve(process.argv[beforeAt + 1]);
const runsArgument = process.argv
  .slice(2)
  .find((value, index, all) => all[index - 1] !== "--before" && value !== "--before");
const RUNS = Math.max(30, Number(runsArgument ?? 50));
const WARMUP = 5;
const FILE_BYTES = 1_000_000;

const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-")));
try {
  // 1,000,000 bytes of source-like text: lines of 63 characters plus a newline.
  const line = `${"const value = compute(alpha, beta, gamma); // a comment".padEnd(63, " ")}\n`;
  const text = line.repeat(Math.ceil(FILE_BYTES / line.length)).slice(0, FILE_BYTES);
  const file = path.join(root, "big.txt");
  await writeFile(file, text);

  const client = await createLocalSandbox({ root, mode: "danger-full-access" });
  // Budgets lifted so the tool returns the whole file, as the baseline does.
  const lifted = {
    maxLines: Number.MAX_SAFE_INTEGER,
    maxChars: Number.MAX_SAFE_INTEGER,
    maxLineChars: Number.MAX_SAFE_INTEGER,
  };
  const wholeRead = createReadFileTool(client, lifted);
  const defaultRead = createReadFileTool(client);
  const bash = createBashTool(client);

  const whole = await wholeRead.execute({ path: "big.txt" });
  if (whole.content !== text)
    throw new Error("read_file with lifted budgets did not return the whole file");
  const firstWindow = await defaultRead.execute({ path: "big.txt" });
  const ranTrue = await bash.execute({ command: "true" });

  const older = [];
  if (before !== undefined) {
    const load = (file) => import(pathToFileURL(path.join(before, file)).href);
    const { createReadFileTool: createOlderReadFileTool } = await load(
      "coding-agent/dist/tools/read-file/tool.js",
    );
    const { createLocalSandbox: createOlderLocalSandbox } = await load("sandbox/dist/index.js");
    const olderClient = await createOlderLocalSandbox({ root, mode: "danger-full-access" });
    const olderWhole = createOlderReadFileTool(olderClient, lifted);
    const olderDefault = createOlderReadFileTool(olderClient);
    const [olderWholeOutput, olderDefaultOutput] = [
      await olderWhole.execute({ path: "big.txt" }),
      await olderDefault.execute({ path: "big.txt" }),
    ];
    if (
      JSON.stringify(olderWholeOutput) !== JSON.stringify(whole) ||
      JSON.stringify(olderDefaultOutput) !== JSON.stringify(firstWindow)
    ) {
      throw new Error("the --before build returns something else than this build");
    }
    older.push(
      ["before: read_file (whole)", () => olderWhole.execute({ path: "big.txt" })],
      ["before: read_file (default)", () => olderDefault.execute({ path: "big.txt" })],
    );
  }

  const cases = [
    ["read_file (whole, budgets lifted)", () => wholeRead.execute({ path: "big.txt" })],
    ["read_file (default budget)", () => defaultRead.execute({ path: "big.txt" })],
    ...older,
    ["fs.readFile utf8 (baseline)", () => readFile(file, "utf8")],
    ["bash tool `true`", () => bash.execute({ command: "true" })],
    ["spawn bash -c true (baseline)", spawnTrue],
  ];
  const samples = new Map(cases.map(([name]) => [name, []]));
  // A fixed seed: the same shuffles from run to run of the script.
  let seed = 0x2545f491;
  const random = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let run = 0; run < WARMUP + RUNS; run++) {
    // The order is shuffled every round, so no case always runs right after the same other one
    // (a spawn's exit is still being handled when the next case starts).
    const order = cases.map((_, index) => index);
    for (let index = order.length - 1; index > 0; index--) {
      const other = Math.floor(random() * (index + 1));
      [order[index], order[other]] = [order[other], order[index]];
    }
    for (const at of order) {
      const [name, action] = cases[at];
      const started = performance.now();
      await action();
      const elapsed = performance.now() - started;
      if (run >= WARMUP) samples.get(name).push(elapsed);
    }
  }

  const median = (name) => {
    const sorted = [...samples.get(name)].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  };
  const percentile = (name, fraction) => {
    const sorted = [...samples.get(name)].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
  };
  const baselineOf = {
    "read_file (whole, budgets lifted)": "fs.readFile utf8 (baseline)",
    "read_file (default budget)": "fs.readFile utf8 (baseline)",
    "before: read_file (whole)": "fs.readFile utf8 (baseline)",
    "before: read_file (default)": "fs.readFile utf8 (baseline)",
    "bash tool `true`": "spawn bash -c true (baseline)",
  };
  console.log(
    `node ${process.version}, ${os.cpus()[0]?.model ?? "?"} x${os.cpus().length}; ${RUNS} runs each (+${WARMUP} warm-up), interleaved; file ${FILE_BYTES.toLocaleString("en-US")} bytes`,
  );
  console.log(
    `read_file default budget returns lines ${firstWindow.startLine}-${firstWindow.endLine} of ${firstWindow.totalLines} (${firstWindow.content.length.toLocaleString("en-US")} chars); bash \`true\` exit ${ranTrue.exitCode ?? JSON.stringify(ranTrue).slice(0, 60)}`,
  );
  const rows = cases.map(([name]) => ({
    case: name,
    "median ms": median(name).toFixed(3),
    "p90 ms": percentile(name, 0.9).toFixed(3),
    "vs baseline":
      baselineOf[name] === undefined
        ? ""
        : `${(median(name) / median(baselineOf[name])).toFixed(2)}x`,
  }));
  console.table(rows);
} finally {
  await rm(root, { recursive: true, force: true });
}

function spawnTrue() {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/bash", ["-c", "true"], { stdio: ["ignore", "pipe", "pipe"] });
    child.on("error", reject);
    child.on("close", resolve);
  });
}
