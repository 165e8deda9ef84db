// Benchmark: search_files against raw `rg`, and list_files against raw `find`, on real trees.
//
//   npx tsc -b && node bench/search-list.mjs [--runs 15]
//
// The trees are made at run time from npm packages (`npm pack`, unpacked into bench/.cache, which
// git ignores; no third-party source is committed). The tools run through a local sandbox client
// in danger-full-access mode, so both sides are unsandboxed spawns; the raw baselines get the very
// arguments the tools pass, so the ratio is the tools' own overhead (shell, `head`, parsing,
// sorting, schema validation). maxMatches / maxEntries are set above the trees' totals so both
// sides do the same work; the script checks the counts agree. Runs are interleaved (the order
// alternates) and medians reported.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.dirname(here);
const cache = path.join(here, ".cache");
const packages = ["typescript@5.9.3", "rxjs@7.8.2", "lodash@4.17.21", "date-fns@4.1.0"];
const listCopies = 6;
const runsArgument = process.argv.indexOf("--runs");
const runs = runsArgument === -1 ? 15 : Number(process.argv[runsArgument + 1]);
const warmups = 2;

const distTools = path.join(repoRoot, "packages/coding-agent/dist/tools");
if (!existsSync(path.join(distTools, "search-files.js"))) {
  console.error("Build first: npx tsc -b");
  process.exit(1);
}
const { createSearchFilesTool } = await import(path.join(distTools, "search-files.js"));
const { createListFilesTool } = await import(path.join(distTools, "list-files.js"));
const { createLocalSandbox } = await import(path.join(repoRoot, "packages/sandbox/dist/index.js"));

/** Unpack each package once into bench/.cache/work/search, and copies of it into .../list. */
function prepareTrees() {
  const work = path.join(cache, "work");
  const search = path.join(work, "search");
  const list = path.join(work, "list");
  const stamp = path.join(work, `.ready-${packages.join(",")}-${listCopies}`);
  if (existsSync(stamp)) return { work, search, list };
  rmSync(work, { recursive: true, force: true });
  mkdirSync(search, { recursive: true });
  mkdirSync(list, { recursive: true });
  for (const spec of packages) {
    const name = spec.slice(0, spec.lastIndexOf("@")).replace("/", "-");
    const version = spec.slice(spec.lastIndexOf("@") + 1);
    const tarball = path.join(cache, `${name}-${version}.tgz`);
    if (!existsSync(tarball)) {
      execFileSync("npm", ["pack", spec, "--silent", "--pack-destination", cache], {
        stdio: ["ignore", "ignore", "inherit"],
      });
    }
    const target = path.join(search, name);
    mkdirSync(target);
    execFileSync("tar", ["xzf", tarball, "-C", target, "--strip-components=1"]);
  }
  for (let copy = 0; copy < listCopies; copy++) {
    cpSync(search, path.join(list, `copy-${copy}`), { recursive: true });
  }
  execFileSync("touch", [stamp]);
  return { work, search, list };
}

/** Spawn argv in cwd, collect stdout whole, resolve with its byte length and duration. */
function runRaw(argv, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (code) => {
      const stdout = Buffer.concat(chunks).toString("utf8");
      resolve({ ms: performance.now() - started, stdout, code });
    });
  });
}

async function timeTool(run) {
  const started = performance.now();
  const output = await run();
  return { ms: performance.now() - started, output };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Alternate which side goes first, discard warm-ups, return both sides' timings. */
async function interleave(tool, raw) {
  const times = { tool: [], raw: [] };
  let toolCount;
  let rawCount;
  for (let index = 0; index < warmups + runs; index++) {
    const order = index % 2 === 0 ? ["tool", "raw"] : ["raw", "tool"];
    for (const side of order) {
      const result = side === "tool" ? await tool() : await raw();
      if (index >= warmups) times[side].push(result.ms);
      if (side === "tool") toolCount = result.count;
      else rawCount = result.count;
    }
  }
  return { tool: median(times.tool), raw: median(times.raw), toolCount, rawCount };
}

const trees = prepareTrees();
const client = await createLocalSandbox({ root: trees.work, mode: "danger-full-access" });
const searchTool = createSearchFilesTool(client, { searchBackend: "rg" });
const listTool = createListFilesTool(client);

// The exact ripgrep argv search_files builds (see search-files.ts), without the `| head`.
const rgArgv = (pattern) => [
  "rg",
  "--no-config",
  "--null",
  "--line-number",
  "--with-filename",
  "--no-heading",
  "--color=never",
  "--hidden",
  "--glob=!.git",
  "--max-columns=4096",
  "--max-columns-preview",
  `--regexp=${pattern}`,
  "--",
  ".",
];
// A selective pattern (about 1,300 matches) and a broad one (about 60,000: parsing dominates).
const patterns = ["export (declare )?function \\w+", "return"];
const findArgv = [
  "find",
  ".",
  "-mindepth",
  "1",
  "-name",
  ".git",
  "-prune",
  "-o",
  "(",
  "-type",
  "f",
  "-o",
  "-type",
  "d",
  ")",
  "-printf",
  "%p\\t%y\\t%s\\0",
];
const countRecords = (text, separator) => text.split(separator).filter(Boolean).length;

const searches = [];
for (const pattern of patterns) {
  const result = await interleave(
    async () => {
      const { ms, output } = await timeTool(() =>
        searchTool.execute({ pattern, path: "search", maxMatches: 100_000 }),
      );
      return { ms, count: output.length };
    },
    async () => {
      const { ms, stdout } = await runRaw(rgArgv(pattern), trees.search);
      return { ms, count: countRecords(stdout, "\n") };
    },
  );
  searches.push({ pattern, result });
}
const list = await interleave(
  async () => {
    const { ms, output } = await timeTool(() =>
      listTool.execute({ dir: "list", recursive: true, maxEntries: 1_000_000 }),
    );
    return { ms, count: output.length };
  },
  async () => {
    const { ms, stdout } = await runRaw(findArgv, trees.list);
    return { ms, count: countRecords(stdout, "\0") };
  },
);

const row = (name, baseline, result) =>
  `| ${name.padEnd(40)} | ${baseline.padEnd(24)} | ${String(result.toolCount).padStart(7)} | ${String(result.rawCount).padStart(7)} | ${result.tool.toFixed(1).padStart(8)} | ${result.raw.toFixed(1).padStart(8)} | ${(result.tool / result.raw).toFixed(2).padStart(5)}x |`;
console.log(
  `search tree: ${readdirSync(trees.search).join(", ")}; list tree: ${listCopies} copies of it`,
);
console.log(`medians of ${runs} interleaved runs after ${warmups} warm-ups each\n`);
console.log(
  "| tool call (maxMatches 100k, maxEntries 1M) | baseline         | results |     raw | tool ms  |  raw ms  | ratio  |",
);
console.log(
  "| ---------------------------------------- | ------------------------ | ------: | ------: | -------: | -------: | -----: |",
);
for (const { pattern, result } of searches) {
  console.log(row(`search_files /${pattern}/`, "rg, same argv, no head", result));
}
console.log(row("list_files recursive", "find, same argv, no sort", list));
const results = [...searches.map((search) => search.result), list];
if (results.some((result) => result.toolCount !== result.rawCount)) {
  console.log("\nwarning: the tool and the baseline returned different counts");
}
