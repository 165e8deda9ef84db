// Benchmark: search_files against raw `rg`, and list_files against raw `rg --files` (leaving
// ignored files out, its default) and raw `find` (with includeIgnored), on real trees.
//
//   npx tsc -b && node bench/search-list.mjs [--runs 15] [--warmups 3] [--only <text in a case name>]
//     [--before <a copy of an older packages/coding-agent/dist, to time it in the same rounds>]
//
// The trees are made at run time from npm packages (`npm pack`, unpacked into bench/.cache, which
// git ignores; no third-party source is committed). The tools run through a local sandbox client
// in danger-full-access mode, so both sides are unsandboxed spawns. A baseline is the program the
// tool runs, spawned straight from node with no shell: the tool's own argv (the script checks the
// tool's command holds it word for word), its output read whole into a string as a caller of
// `spawn` would (`Buffer.concat`, then `toString("utf8")`; the sandbox client decodes the tool's
// output with Node's decoder too). Where the tool caps the output,
// the baseline stops reading after as many records and closes the pipe, as `| head` would,
// without a `head` or a shell (nor the `dd` that the tool's pipeline ends in above 1,000 matches).
//
// Two kinds of case:
// - same work: maxMatches / maxEntries above the trees' totals, so both sides print everything;
//   the script checks the two sides found the same records.
// - defaults (maxMatches 100, maxEntries 5,000), what a model gets when it passes no limit.
//   search_files's first run prints ripgrep's `--heading` output (a file's path once, above its
//   matches; a blank line between files) cut at 202 lines, which hold more than 100 matches. A
//   search whose first, parallel run was cut runs again with `--sort=path`, printing
//   `path\0line:content` records cut at 101 lines (see search-files.ts: the cut must not depend on
//   thread timing); one that was not cut is complete and is cut in path order without a second
//   run. So the cut cases have three baselines: the parallel `rg` cut after 202 lines (what the
//   first run does); `rg --sort=path` cut after 101 lines (the fastest way to get the answer the
//   tool gives, which the script checks it does, if one knew beforehand that the search would be
//   cut); and both one after the other (the work the tool does when its first run was cut, so
//   that ratio is its own overhead then). The "runs" column says how many searches the tool ran.
//
// Sides run interleaved (the order rotates every round) after warm-up rounds; medians and p90s
// are reported, ratio = tool median / baseline median. The machine's load is printed: on a shared
// machine, rerun before trusting a ratio.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.dirname(here);
const cache = path.join(here, ".cache");
const packages = ["typescript@5.9.3", "rxjs@7.8.2", "lodash@4.17.21", "date-fns@4.1.0"];
const listCopies = 6;
const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : process.argv[index + 1];
};
const runs = Number(option("--runs", 15));
const warmups = Number(option("--warmups", 3));
const dist = path.join(repoRoot, "packages/coding-agent/dist");
const beforeDist = option("--before", undefined);
const only = option("--only", "");

if (!existsSync(path.join(dist, "tools/search-files.js"))) {
  console.error("Build first: npx tsc -b");
  process.exit(1);
}
const load = async (folder, file) => import(pathToFileURL(path.resolve(folder, file)).href);
const { shellJoin } = await load(dist, "tools/shell-quote.js");
const { createLocalSandbox } = await import(
  pathToFileURL(path.join(repoRoot, "packages/sandbox/dist/index.js")).href
);

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

/**
 * Spawn argv in cwd and read its stdout into one string. With `limit`, stop after that many
 * `separator`-terminated records and close the pipe (what `| head` does), keeping those records.
 */
function runRaw(argv, cwd, { separator, limit = Number.POSITIVE_INFINITY }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    const byte = separator.charCodeAt(0);
    let records = 0;
    let done = false;
    child.stdout.on("data", (chunk) => {
      if (done) return;
      if (limit !== Number.POSITIVE_INFINITY) {
        for (
          let index = chunk.indexOf(byte);
          index !== -1;
          index = chunk.indexOf(byte, index + 1)
        ) {
          records += 1;
          if (records === limit) {
            chunks.push(chunk.subarray(0, index + 1));
            done = true;
            child.stdout.destroy();
            return;
          }
        }
      }
      chunks.push(chunk);
    });
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", () => {
      const stdout = Buffer.concat(chunks).toString("utf8");
      resolve({ ms: performance.now() - started, stdout });
    });
  });
}

/**
 * `path:line` of each match in ripgrep's `--null` output, workspace-relative: `./path\0line:content`
 * records, or with `--heading` `./path\0` before a file's first `line:content` only (and a blank
 * line between files).
 */
function rgKeys(stdout, folder) {
  const keys = [];
  let path = "";
  for (let line of stdout.split("\n")) {
    const nul = line.indexOf("\0");
    if (nul !== -1) {
      path = line.slice(2, nul);
      line = line.slice(nul + 1);
    }
    const number = /^(\d+):/.exec(line);
    if (number !== null) keys.push(`${folder}/${path}:${number[1]}`);
  }
  return keys;
}
/** The workspace-relative path of each `./path\tkind\tsize\0` record find printed in `folder`. */
const findKeys = (folder) => (stdout) =>
  stdout
    .split("\0")
    .filter(Boolean)
    .map((record) => `${folder}/${record.slice(2, record.lastIndexOf("\t") - 2)}`);
/**
 * The entries list_files makes of `rg --files` output in `folder`: the files and the folders
 * between them and `folder` (with `children`, only their first path segments), sorted.
 */
const rgFilesKeys =
  (folder, { children = false } = {}) =>
  (stdout) => {
    const keys = new Set();
    for (const file of stdout.split("\0").filter(Boolean)) {
      const parts = file.slice(2).split("/");
      const kept = children ? 1 : parts.length;
      for (let depth = 1; depth <= kept; depth++) {
        keys.add(`${folder}/${parts.slice(0, depth).join("/")}`);
      }
    }
    return [...keys].sort((left, right) => Buffer.compare(Buffer.from(left), Buffer.from(right)));
  };

const quantile = (values, fraction) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
};

const trees = prepareTrees();
const sandbox = await createLocalSandbox({ root: trees.work, mode: "danger-full-access" });
// Record the commands the tools run, to check each baseline's argv is in them word for word.
const commands = [];
const client = {
  ...sandbox,
  exec(command, options) {
    commands.push(command);
    return sandbox.exec(command, options);
  },
};
/** search_files and list_files built from `folder` (a coding-agent dist). */
async function toolsFrom(folder) {
  const { createSearchFilesTool } = await load(folder, "tools/search-files.js");
  const { createListFilesTool } = await load(folder, "tools/list-files.js");
  const list = createListFilesTool(client);
  // An older build knows no includeIgnored, and always listed everything with find.
  const knowsIgnored = "includeIgnored" in list.inputSchema.shape;
  return {
    search: createSearchFilesTool(client, { searchBackend: "rg" }),
    list: {
      execute: ({ includeIgnored, ...input }) =>
        list.execute(knowsIgnored ? { ...input, includeIgnored } : input),
    },
  };
}
const toolsets = [await toolsFrom(dist)];
if (beforeDist !== undefined) toolsets.push(await toolsFrom(beforeDist));

// The ripgrep argv search_files builds (see search-files.ts), without the shell around it: the
// first run prints headings, the run in path order records.
const rgArgv = (pattern, { sorted = false } = {}) => [
  "rg",
  "--no-config",
  "--null",
  "--line-number",
  "--with-filename",
  sorted ? "--no-heading" : "--heading",
  "--color=never",
  "--hidden",
  "--no-require-git",
  "--no-ignore-global",
  "--glob=!.git",
  // maxSnippetChars (500) × 4: the bytes of the longest snippet the tool returns.
  "--max-columns=2000",
  "--max-columns-preview",
  ...(sorted ? ["--sort=path"] : []),
  `--regexp=${pattern}`,
  "--",
  ".",
];
// The find argv list_files builds with includeIgnored (see list-files-command.ts).
const findArgv = ({ children = false } = {}) => [
  "find",
  ".",
  "-mindepth",
  "1",
  ...(children ? ["-maxdepth", "1"] : []),
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
// The ripgrep argv list_files builds by default (see list-files-command.ts): in path order when
// recursive, in parallel for a folder's children (whose first path segments it keeps).
const rgFilesArgv = ({ children = false } = {}) => [
  "rg",
  "--no-config",
  "--files",
  "--null",
  "--hidden",
  "--no-require-git",
  "--no-ignore-global",
  "--glob=!.git",
  ...(children ? [] : ["--sort=path"]),
  "--",
  ".",
];

const problems = [];
const rows = [];

/**
 * Time the tool (and the `--before` build of it) and its baselines interleaved. `tool(tools)` calls
 * the tool, `keysOf(output)` gives its records as comparable keys; each baseline says how to read
 * its stdout into keys and whether its records must equal the tool's (`same`), begin with them in
 * order (`prefix`: the baseline printed more, as the tool's `head` lets through), only be as many
 * (`count`) or at least as many (`atLeast`). A baseline marked `ifCut` is a command the tool runs
 * only when its first search was cut: its argv is checked only then. Only the current build is
 * checked.
 */
async function measure(name, { tool, keysOf, baselines }) {
  if (!name.includes(only)) return;
  const sides = [
    ...toolsets.map((tools) => ({ run: () => tool(tools), isTool: true })),
    ...baselines,
  ];
  const times = sides.map(() => []);
  const lastKeys = sides.map(() => []);
  let toolRuns = 0;
  for (let round = 0; round < warmups + runs; round++) {
    for (let step = 0; step < sides.length; step++) {
      const index = (round + step) % sides.length;
      const side = sides[index];
      commands.length = 0;
      const started = performance.now();
      const result = await side.run();
      const ms = side.isTool ? performance.now() - started : result.ms;
      if (round >= warmups) times[index].push(ms);
      // Checked on the last round only: keys made every round are garbage that the next timed
      // run (whichever side it is) would have to collect.
      if (round === warmups + runs - 1) {
        lastKeys[index] = side.isTool ? keysOf(result) : side.keys(result.stdout);
      }
      if (index === 0 && round === 0) {
        toolRuns = commands.length;
        const checked = baselines.filter((baseline) => !baseline.ifCut || toolRuns > 1);
        for (const argv of checked.flatMap((baseline) => baseline.argvs)) {
          const words = shellJoin(argv);
          // list_files passes find the placeholder folders to skip as "$@" (none in these trees).
          const same = (command) => command.replaceAll(' "$@"', "").includes(words);
          if (!commands.some(same)) {
            problems.push(`${name}: the tool did not run the baseline's argv: ${words}`);
          }
        }
      }
    }
  }
  const timesOf = (index) => ({
    median: quantile(times[index], 0.5),
    p90: quantile(times[index], 0.9),
  });
  baselines.forEach((baseline, offset) => {
    const index = offset + toolsets.length;
    const toolKeys = lastKeys[0];
    const rawKeys = lastKeys[index];
    const longer = baseline.check === "prefix" || baseline.check === "atLeast";
    if (longer ? rawKeys.length < toolKeys.length : toolKeys.length !== rawKeys.length) {
      problems.push(
        `${name} vs ${baseline.label}: ${toolKeys.length} vs ${rawKeys.length} records`,
      );
    } else if (baseline.check === "prefix") {
      if (toolKeys.some((key, at) => key !== rawKeys[at])) {
        problems.push(`${name} vs ${baseline.label}: different records`);
      }
    } else if (baseline.check === "same") {
      const differs =
        baseline.order === "sorted"
          ? toolKeys.some((key, at) => key !== rawKeys[at])
          : [...toolKeys].sort().join("\n") !== [...rawKeys].sort().join("\n");
      if (differs) problems.push(`${name} vs ${baseline.label}: different records`);
    }
    rows.push({
      name: offset === 0 ? name : "",
      baseline,
      tool: timesOf(0),
      before: toolsets.length > 1 ? timesOf(1) : undefined,
      raw: timesOf(index),
      count: toolKeys.length,
      toolRuns,
    });
  });
}

const searchKeys = (output) => output.map((match) => `${match.path}:${match.line}`);
const listKeys = (output) => output.map((entry) => entry.path);

// A selective pattern (about 1,300 matches), a broad one (about 60,000: parsing dominates), a rare
// one (8 matches: the whole tree is searched and nothing is cut), and a sparse one just over the
// default cap (119 matches: the worst case for a cut, both searches walk most of the tree).
const selective = "export (declare )?function \\w+";
const broad = "return";
const rare = "function createSourceFile";
const sparse = "TODO";

for (const pattern of [selective, broad]) {
  await measure(`search /${pattern}/ maxMatches 100k`, {
    tool: ({ search }) => search.execute({ pattern, path: "search", maxMatches: 100_000 }),
    keysOf: searchKeys,
    baselines: [
      {
        label: "rg (all cores)",
        argvs: [rgArgv(pattern)],
        check: "same",
        run: () => runRaw(rgArgv(pattern), trees.search, { separator: "\n" }),
        keys: (stdout) => rgKeys(stdout, "search"),
      },
    ],
  });
}
await measure(`search /${rare}/ default (not cut)`, {
  tool: ({ search }) => search.execute({ pattern: rare, path: "search" }),
  keysOf: searchKeys,
  baselines: [
    {
      label: "rg (all cores)",
      argvs: [rgArgv(rare)],
      check: "same",
      run: () => runRaw(rgArgv(rare), trees.search, { separator: "\n" }),
      keys: (stdout) => rgKeys(stdout, "search"),
    },
  ],
});
// search_files cuts ripgrep's first run at 2 × (maxMatches + 1) lines, and the run in path order at
// maxMatches + 1 (see search-files.ts).
const cutLines = 2 * (100 + 1);
const sortedLines = 100 + 1;
for (const pattern of [selective, broad, sparse]) {
  await measure(`search /${pattern}/ default (cut at 100)`, {
    tool: ({ search }) => search.execute({ pattern, path: "search" }),
    keysOf: searchKeys,
    baselines: [
      {
        label: `rg, first ${cutLines} lines`,
        argvs: [rgArgv(pattern)],
        check: "atLeast",
        run: () => runRaw(rgArgv(pattern), trees.search, { separator: "\n", limit: cutLines }),
        keys: (stdout) => rgKeys(stdout, "search"),
      },
      {
        label: `rg --sort=path, first ${sortedLines}`,
        argvs: [rgArgv(pattern, { sorted: true })],
        ifCut: true,
        check: "prefix",
        run: () =>
          runRaw(rgArgv(pattern, { sorted: true }), trees.search, {
            separator: "\n",
            limit: sortedLines,
          }),
        keys: (stdout) => rgKeys(stdout, "search"),
      },
      {
        label: "both of those, one after the other",
        argvs: [rgArgv(pattern), rgArgv(pattern, { sorted: true })],
        ifCut: true,
        check: "prefix",
        run: async () => {
          const all = await runRaw(rgArgv(pattern), trees.search, {
            separator: "\n",
            limit: cutLines,
          });
          const sorted = await runRaw(rgArgv(pattern, { sorted: true }), trees.search, {
            separator: "\n",
            limit: sortedLines,
          });
          return { ms: all.ms + sorted.ms, stdout: sorted.stdout };
        },
        keys: (stdout) => rgKeys(stdout, "search"),
      },
    ],
  });
}

const oneFolder = "list/copy-0/typescript/lib";
const onePackage = "list/copy-0/lodash";
// Leaving ignored files out (the default): ripgrep lists the files, find prints each one's record.
await measure("list_files list/, recursive, maxEntries 1M", {
  tool: ({ list }) => list.execute({ dir: "list", recursive: true, maxEntries: 1_000_000 }),
  keysOf: listKeys,
  baselines: [
    {
      label: "rg --files --sort=path",
      argvs: [rgFilesArgv()],
      check: "same",
      order: "sorted",
      run: () => runRaw(rgFilesArgv(), trees.list, { separator: "\0" }),
      keys: rgFilesKeys("list"),
    },
  ],
});
await measure(`list_files ${oneFolder}/ (its children)`, {
  tool: ({ list }) => list.execute({ dir: oneFolder }),
  keysOf: listKeys,
  baselines: [
    {
      label: "rg --files",
      argvs: [rgFilesArgv({ children: true })],
      check: "same",
      run: () =>
        runRaw(rgFilesArgv({ children: true }), path.join(trees.work, oneFolder), {
          separator: "\0",
        }),
      keys: rgFilesKeys(oneFolder, { children: true }),
    },
  ],
});
await measure(`list_files ${onePackage}/, recursive, default (not cut)`, {
  tool: ({ list }) => list.execute({ dir: onePackage, recursive: true }),
  keysOf: listKeys,
  baselines: [
    {
      label: "rg --files --sort=path",
      argvs: [rgFilesArgv()],
      check: "same",
      order: "sorted",
      run: () => runRaw(rgFilesArgv(), path.join(trees.work, onePackage), { separator: "\0" }),
      keys: rgFilesKeys(onePackage),
    },
  ],
});
await measure("list_files list/, recursive, default (cut at 5,000)", {
  tool: ({ list }) => list.execute({ dir: "list", recursive: true }),
  keysOf: listKeys,
  baselines: [
    {
      label: "rg --files --sort=path, first 5,001",
      argvs: [rgFilesArgv()],
      check: "atLeast",
      run: () => runRaw(rgFilesArgv(), trees.list, { separator: "\0", limit: 5_001 }),
      keys: rgFilesKeys("list"),
    },
  ],
});
// With includeIgnored: find lists every file and folder.
await measure("list_files list/, recursive, includeIgnored, maxEntries 1M", {
  tool: ({ list }) =>
    list.execute({ dir: "list", recursive: true, includeIgnored: true, maxEntries: 1_000_000 }),
  keysOf: listKeys,
  baselines: [
    {
      label: "find",
      argvs: [findArgv()],
      check: "same",
      run: () => runRaw(findArgv(), trees.list, { separator: "\0" }),
      keys: findKeys("list"),
    },
  ],
});
await measure(`list_files ${oneFolder}/ (its children), includeIgnored`, {
  tool: ({ list }) => list.execute({ dir: oneFolder, includeIgnored: true }),
  keysOf: listKeys,
  baselines: [
    {
      label: "find -maxdepth 1",
      argvs: [findArgv({ children: true })],
      check: "same",
      run: () =>
        runRaw(findArgv({ children: true }), path.join(trees.work, oneFolder), {
          separator: "\0",
        }),
      keys: findKeys(oneFolder),
    },
  ],
});
await measure(`list_files ${onePackage}/, recursive, includeIgnored (not cut)`, {
  tool: ({ list }) => list.execute({ dir: onePackage, recursive: true, includeIgnored: true }),
  keysOf: listKeys,
  baselines: [
    {
      label: "find",
      argvs: [findArgv()],
      check: "same",
      run: () => runRaw(findArgv(), path.join(trees.work, onePackage), { separator: "\0" }),
      keys: findKeys(onePackage),
    },
  ],
});
await measure("list_files list/, recursive, includeIgnored (cut at 5,000)", {
  tool: ({ list }) => list.execute({ dir: "list", recursive: true, includeIgnored: true }),
  keysOf: listKeys,
  baselines: [
    {
      label: "find, first 5,000 records",
      argvs: [findArgv()],
      check: "count",
      run: () => runRaw(findArgv(), trees.list, { separator: "\0", limit: 5_000 }),
      keys: findKeys("list"),
    },
  ],
});

const version = (argv) => execFileSync(argv[0], argv.slice(1), { encoding: "utf8" }).split("\n")[0];
console.log(
  `search tree: ${readdirSync(trees.search).join(", ")}; list tree: ${listCopies} copies of it`,
);
console.log(
  `${version(["rg", "--version"])}; ${version(["find", "--version"])}; node ${process.version}; ${availableParallelism()} CPUs; load average after: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(" ")}`,
);
if (beforeDist !== undefined) console.log(`"before" columns: the build in ${beforeDist}`);
console.log(`${runs} interleaved runs per side after ${warmups} warm-up rounds; times in ms\n`);
const header = [
  "case",
  "baseline",
  "results",
  "runs",
  "tool med",
  "tool p90",
  "raw med",
  "raw p90",
  "ratio",
  ...(beforeDist === undefined ? [] : ["before med", "before ratio"]),
];
const table = rows.map(({ name, baseline, tool, before, raw, count, toolRuns }) => [
  name,
  baseline.label,
  String(count),
  String(toolRuns),
  tool.median.toFixed(1),
  tool.p90.toFixed(1),
  raw.median.toFixed(1),
  raw.p90.toFixed(1),
  `${(tool.median / raw.median).toFixed(2)}x`,
  ...(before === undefined
    ? []
    : [before.median.toFixed(1), `${(before.median / raw.median).toFixed(2)}x`]),
]);
const widths = header.map((title, column) =>
  Math.max(title.length, ...table.map((cells) => cells[column].length)),
);
const line = (cells) =>
  `| ${cells.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join(" | ")} |`;
console.log(line(header));
console.log(
  `| ${widths.map((width, column) => (column < 2 ? "-".repeat(width) : `${"-".repeat(width - 1)}:`)).join(" | ")} |`,
);
for (const cells of table) console.log(line(cells));
if (problems.length > 0) {
  console.log(`\nthe sides did not do the same work:\n${problems.join("\n")}`);
  process.exitCode = 1;
}
