// Benchmark: apply_diff's engine against GNU patch, `git apply --recount` and jsdiff's applyPatch
// on real diffs with the mistakes models make, and edit_file's matching on the same hunks.
//
//   npx tsc -b && node bench/edits/run.mjs [--per-package 350] [--seed 1] [--pleach-only]
//     [--real-only] [--engine path/to/dist/tools/index.js]
//
// `--pleach-only` leaves the other tools out (a quick look while changing the engine);
// `--real-only` runs only the real edit calls (see real-edits.mjs), not the npm corpus.
//
// The corpus is built at run time under bench/.cache/edits (git-ignored; no third-party source is
// committed): `npm pack` of consecutive published versions of popular packages, unpacked, and
// `git diff --no-index` between them, one diff per changed text file. Each file diff is applied
// clean and with one perturbation of each kind; every tool gets the very same old text and diff
// text. Outcomes: exact (reported success and the file equals the new version byte for byte),
// refused (reported failure), misapplied (reported success but the file differs).
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { applyPatch } from "diff";
import { editCases, editOutcome } from "./edit-cases.mjs";
import { applyFilePatch, editText, locateTolerantly, parseUnifiedDiff } from "./engine.mjs";
import { PERTURBATIONS } from "./perturbations.mjs";
import { realEditCases, realEditsFolder } from "./real-edits.mjs";
import { SLIPS } from "./slips.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../..");
const cache = path.join(repoRoot, "bench/.cache/edits");
const argument = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const perPackage = argument("--per-package", 350);
const seed = argument("--seed", 1);

/** Consecutive published versions: [package, older, newer]. */
const PAIRS = [
  ["lodash-es", "4.17.20", "4.17.21"],
  ["date-fns", "4.0.0", "4.1.0"],
  ["date-fns", "3.6.0", "4.0.0"],
  ["eslint", "8.57.0", "9.0.0"],
  ["core-js", "3.37.1", "3.38.0"],
  ["typescript", "5.8.3", "5.9.2"],
  ["ajv", "8.12.0", "8.13.0"],
  ["chalk", "5.3.0", "5.4.0"],
  ["commander", "12.0.0", "12.1.0"],
  ["yargs", "17.7.1", "17.7.2"],
  ["express", "4.19.2", "4.20.0"],
  ["axios", "1.7.7", "1.7.8"],
  ["zod", "3.23.7", "3.23.8"],
  ["semver", "7.6.2", "7.6.3"],
  ["uuid", "9.0.1", "10.0.0"],
  ["rxjs", "7.8.1", "7.8.2"],
  ["vue", "3.4.37", "3.4.38"],
  ["prettier", "3.3.2", "3.3.3"],
  ["eslint", "9.9.0", "9.9.1"],
];
const TEXT_FILE = /\.(?:[cm]?js|[cm]?ts|tsx|jsx|json|md|txt|css|html|vue|yml|yaml)$/;
const MAX_FILE_BYTES = 300_000;

function log(message) {
  process.stderr.write(`${message}\n`);
}

/** A small seeded PRNG (mulberry32), so every run perturbs the same way. */
function random(seedValue) {
  let state = seedValue >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** npm pack + unpack one version into the cache, once. */
function unpacked(name, version) {
  const directory = path.join(cache, "packages", `${name.replace("/", "__")}-${version}`);
  if (existsSync(path.join(directory, ".ready"))) return path.join(directory, "package");
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  const output = execFileSync(
    "npm",
    ["pack", `${name}@${version}`, "--silent", "--pack-destination", directory],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const tarball = path.join(directory, output.trim().split("\n").at(-1));
  execFileSync("tar", ["-xzf", tarball, "-C", directory]);
  rmSync(tarball);
  // Some tarballs unpack into a folder named after the package instead of `package`.
  const [top] = readdirSync(directory).filter((entry) => entry !== ".ready");
  if (top !== "package")
    execFileSync("mv", [path.join(directory, top), path.join(directory, "package")]);
  writeFileSync(path.join(directory, ".ready"), "");
  return path.join(directory, "package");
}

/** The modified text files of one package pair, each with its clean `git diff --no-index`. */
function fileDiffs(name, older, newer) {
  const work = path.join(cache, "pairs", `${name.replace("/", "__")}-${older}-${newer}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const oldRoot = unpacked(name, older);
  const newRoot = unpacked(name, newer);
  execFileSync("ln", ["-s", oldRoot, path.join(work, "old")]);
  execFileSync("ln", ["-s", newRoot, path.join(work, "new")]);
  const result = spawnSync(
    "git",
    ["diff", "--no-index", "--no-color", "--no-renames", "--no-ext-diff", "-U3", "old/", "new/"],
    { cwd: work, encoding: "utf8", maxBuffer: 1 << 30 },
  );
  const files = [];
  for (const chunk of result.stdout.split(/^(?=diff --git )/m)) {
    if (!chunk.startsWith("diff --git ")) continue;
    if (/^(?:new file|deleted file|Binary files|rename )/m.test(chunk)) continue;
    const header = /^--- a\/old\/(.+)\n\+\+\+ b\/new\/(.+)\n/m.exec(chunk);
    if (header === null || header[1] !== header[2] || !TEXT_FILE.test(header[1])) continue;
    const relative = header[1];
    const oldPath = path.join(oldRoot, relative);
    if (statSync(oldPath).size > MAX_FILE_BYTES) continue;
    const oldText = readFileSync(oldPath, "utf8");
    const newText = readFileSync(path.join(newRoot, relative), "utf8");
    const hunks = chunk.slice(chunk.indexOf("\n@@") + 1);
    const diff = `diff --git a/${relative} b/${relative}\n--- a/${relative}\n+++ b/${relative}\n${hunks}`;
    files.push({ name, relative, oldText, newText, diff });
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// The tools under test. Each returns "exact", "refused" or "misapplied".

function judge(success, text, expected) {
  if (!success) return "refused";
  // No expected text: the case is ambiguous and any success a guess.
  return expected !== undefined && text === expected ? "exact" : "misapplied";
}

function runEngine(item) {
  let files;
  try {
    files = parseUnifiedDiff(item.diff);
  } catch {
    return "refused";
  }
  if (files.length !== 1) return "refused";
  const result = applyFilePatch(item.oldText, files[0]);
  return judge(result.conflicts.length === 0, result.text, item.newText);
}

function runJsdiff(item) {
  let text;
  try {
    text = applyPatch(item.oldText, item.diff);
  } catch {
    return "refused";
  }
  return judge(text !== false, text, item.newText);
}

// Outside the repository: `git apply` run inside a repository's subfolder ignores the patch.
const scratch = mkdtempSync(path.join(os.tmpdir(), "pleach-bench-edits-"));

function runPatch(item) {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  writeFileSync(path.join(scratch, "target"), item.oldText);
  const result = spawnSync(
    "patch",
    ["-p0", "--forward", "--batch", "--no-backup-if-mismatch", "--reject-file=-", "--", "target"],
    { cwd: scratch, input: item.diff, encoding: "utf8" },
  );
  return judge(
    result.status === 0,
    readFileSync(path.join(scratch, "target"), "utf8"),
    item.newText,
  );
}

function runGitApply(item) {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(path.join(scratch, path.dirname(item.relative)), { recursive: true });
  const target = path.join(scratch, item.relative);
  writeFileSync(target, item.oldText);
  writeFileSync(path.join(scratch, ".change.patch"), item.diff);
  const result = spawnSync("git", ["apply", "--recount", "--unsafe-paths", ".change.patch"], {
    cwd: scratch,
    encoding: "utf8",
  });
  return judge(result.status === 0, readFileSync(target, "utf8"), item.newText);
}

const ALL_TOOLS = {
  pleach: runEngine,
  "GNU patch": runPatch,
  "git apply --recount": runGitApply,
  jsdiff: runJsdiff,
};
const TOOLS = process.argv.includes("--pleach-only") ? { pleach: runEngine } : ALL_TOOLS;

// ---------------------------------------------------------------------------------------------

const started = Date.now();
mkdirSync(cache, { recursive: true });
const corpus = [];
let packagesUsed = 0;
const realOnly = process.argv.includes("--real-only");
for (const [name, older, newer] of realOnly ? [] : PAIRS) {
  try {
    const files = fileDiffs(name, older, newer);
    const next = random(seed + packagesUsed);
    // A seeded shuffle, then the cap, so large packages do not crowd out the others.
    const picked = files
      .map((file) => ({ file, key: next() }))
      .sort((left, right) => left.key - right.key)
      .slice(0, perPackage)
      .map(({ file }) => file);
    if (picked.length > 0) packagesUsed += 1;
    corpus.push(...picked);
    log(`${name} ${older} -> ${newer}: ${files.length} changed text files, ${picked.length} used`);
  } catch (error) {
    log(`${name} ${older} -> ${newer}: skipped (${String(error.message).split("\n")[0]})`);
  }
}
log(`corpus: ${corpus.length} file diffs from ${packagesUsed} packages`);

const counts = new Map();
const count = (kind, tool, outcome) => {
  const key = `${kind}\u0000${tool}`;
  const entry = counts.get(key) ?? { exact: 0, refused: 0, misapplied: 0 };
  entry[outcome] += 1;
  counts.set(key, entry);
};
const misapplied = [];
rmSync(path.join(cache, "misapplied"), { recursive: true, force: true });

/** Run every tool on each kind's variant of `item`; pleach's misapplied cases are dumped. */
function runKinds(item, kinds, next) {
  for (const [kind, perturb] of Object.entries(kinds)) {
    const variant = perturb(item, next);
    if (variant === undefined) continue;
    for (const [tool, run] of Object.entries(TOOLS)) {
      const outcome = run(variant);
      count(kind, tool, outcome);
      if (tool === "pleach" && outcome === "misapplied") {
        misapplied.push(`${kind} ${item.name}/${item.relative}`);
        const dump = path.join(cache, "misapplied", `${misapplied.length}`);
        mkdirSync(dump, { recursive: true });
        writeFileSync(path.join(dump, "old"), variant.oldText);
        writeFileSync(path.join(dump, "new"), variant.newText);
        writeFileSync(path.join(dump, "diff"), variant.diff);
      }
    }
  }
}

const perturbations = { clean: (item) => item, ...PERTURBATIONS };
// Each family draws from its own stream, so adding slips leaves the perturbations as they were.
const nextPerturbation = random(seed * 7919);
const nextSlip = random(seed * 104_729);
for (const [index, item] of corpus.entries()) {
  runKinds(item, perturbations, nextPerturbation);
  runKinds(item, SLIPS, nextSlip);
  if ((index + 1) % 200 === 0) log(`${index + 1}/${corpus.length} file diffs run`);
}

const editCounts = new Map();
for (const item of corpus) {
  for (const edit of editCases(item)) {
    for (const tolerant of edit.kind === "clean" ? [false, true] : [true]) {
      const outcome = editOutcome(edit, { tolerant });
      const kind = tolerant ? edit.kind : "clean, default mode";
      const entry = editCounts.get(kind) ?? {
        exact: 0,
        refused: 0,
        "wrong-bytes": 0,
        "wrong-place": 0,
      };
      entry[outcome] += 1;
      editCounts.set(kind, entry);
    }
  }
}

// ---------------------------------------------------------------------------------------------

const toolNames = Object.keys(TOOLS);
const cell = ({ exact, refused, misapplied: wrong }) => {
  const total = exact + refused + wrong;
  return `${((100 * exact) / total).toFixed(1)}% exact, ${refused} ref, ${wrong} mis`;
};
const pad = (text, width) => text.padEnd(width);
const widths = [22, ...toolNames.map(() => 30)];
const row = (cells) => `| ${cells.map((text, index) => pad(text, widths[index])).join(" | ")} |`;
const zero = () =>
  Object.fromEntries(toolNames.map((tool) => [tool, { exact: 0, refused: 0, misapplied: 0 }]));

/** One table: a row per kind, then a row per named total of some of the kinds. */
function table(kinds, sums) {
  console.log(row(["kind (cases)", ...toolNames]));
  console.log(row(widths.map((width) => "-".repeat(width))));
  const totals = sums.map(() => zero());
  for (const kind of kinds) {
    const cases = counts.get(`${kind}\u0000pleach`);
    if (cases === undefined) continue;
    const size = cases.exact + cases.refused + cases.misapplied;
    console.log(
      row([
        `${kind} (${size})`,
        ...toolNames.map((tool) => cell(counts.get(`${kind}\u0000${tool}`))),
      ]),
    );
    sums.forEach(({ includes }, index) => {
      if (!includes(kind)) return;
      for (const tool of toolNames) {
        for (const [key, value] of Object.entries(counts.get(`${kind}\u0000${tool}`))) {
          totals[index][tool][key] += value;
        }
      }
    });
  }
  sums.forEach(({ name }, index) => {
    console.log(row([name, ...toolNames.map((tool) => cell(totals[index][tool]))]));
  });
}

console.log(
  `\napply_diff: ${corpus.length} real file diffs from ${packagesUsed} npm packages (seed ${seed})\n`,
);
table(Object.keys(perturbations), [
  {
    name: "perturbed (scored)",
    includes: (kind) => kind !== "clean" && kind !== "ambiguous-stale",
  },
  { name: "+ ambiguous-stale", includes: (kind) => kind !== "clean" },
]);
console.log(
  "\nexact: success reported and the file equals the new version byte for byte; ref: refused; mis: success reported but the file differs.",
);
console.log(
  "duplicate-below: the hunk's old text occurs twice, the diff's line numbers are right: every tool should apply it exactly.",
);
console.log(
  "ambiguous-stale: not scored: the hunk's old text occurs twice and the stale line number singles neither out; the specified outcome is a conflict (refusal), so pleach's refusals there are correct, and nearest-wins tools are right only because the real block happens to be nearer.",
);
console.log("\napply_diff on the slips a model makes inside hunks:\n");
table(Object.keys(SLIPS), [{ name: "all five", includes: () => true }]);
console.log(
  "\nOne slip per hunk where it applies: a one-letter typo in a word of a context line, or of a removed line; a context line between two old lines of the hunk left out; 1-3 lines inserted outside the hunks; the diff indented with tabs where the file has spaces.",
);
console.log(
  "\nedit_file on the same hunks as search/replace edits (tolerant: true unless said):\n",
);
const editColumns = ["exact", "refused", "wrong-bytes", "wrong-place"];
console.log(`| ${pad("kind", 22)} | ${editColumns.map((name) => pad(name, 11)).join(" | ")} |`);
console.log(`| ${"-".repeat(22)} | ${editColumns.map(() => "-".repeat(11)).join(" | ")} |`);
for (const [kind, entry] of editCounts) {
  console.log(
    `| ${pad(kind, 22)} | ${editColumns.map((name) => pad(String(entry[name]), 11)).join(" | ")} |`,
  );
}
if (misapplied.length > 0) {
  console.log(`\npleach misapplied ${misapplied.length} case(s):`);
  for (const line of misapplied.slice(0, 20)) console.log(`  ${line}`);
}

// ---------------------------------------------------------------------------------------------
// Real edit calls (see real-edits.mjs): every engine mode on each, by kind and by slip.

const realFolder = realEditsFolder(repoRoot);
if (realFolder === undefined) {
  console.log(
    "\nreal edit calls: skipped, no shared/real-edits/cases.jsonl found (set PLEACH_REAL_EDITS)",
  );
} else {
  const realCases = realEditCases(realFolder);
  /** edit_file's decision, or before `editText` was exported, its earlier rule. */
  const editFile = (item, tolerant) => {
    let text;
    if (editText !== undefined) text = editText(item.before, item, { tolerant });
    else {
      const count = item.before.split(item.old).length - 1;
      if (count === 1) text = item.before.replace(item.old, () => item.new);
      else if (count === 0 && tolerant) {
        const match = locateTolerantly(item.before, item.old, item.new);
        if (match.status === "unique") {
          text =
            item.before.slice(0, match.start) + match.replacement + item.before.slice(match.end);
        }
      }
    }
    return judge(text !== undefined, text, item.intended);
  };
  const asDiff = (item) => ({
    name: item.id,
    relative: item.path,
    oldText: item.before,
    newText: item.intended,
    diff: item.diff,
  });
  const modes = {
    "edit_file tolerant: false": (item) => editFile(item, false),
    "edit_file tolerant: true": (item) => editFile(item, true),
    "apply_diff (pleach)": (item) => runEngine(asDiff(item)),
    ...(TOOLS["GNU patch"] ? { "GNU patch": (item) => runPatch(asDiff(item)) } : {}),
    ...(TOOLS["git apply --recount"]
      ? { "git apply --recount": (item) => runGitApply(asDiff(item)) }
      : {}),
  };
  /** What pleach's modes wrote (they are pure), to tell a whitespace difference apart. */
  const produced = {
    "edit_file tolerant: false": (item) => editText?.(item.before, item, { tolerant: false }),
    "edit_file tolerant: true": (item) => editText?.(item.before, item, { tolerant: true }),
    "apply_diff (pleach)": (item) => {
      const [file] = parseUnifiedDiff(item.diff);
      return file === undefined ? undefined : (applyFilePatch(item.before, file).text ?? undefined);
    },
  };
  const realCounts = new Map();
  const realMisapplied = [];
  const bare = (text) => text.replace(/[ \t]+$/gm, "");
  for (const item of realCases) {
    const groups = [item.kind, ...(item.kind === "slip" ? [`slip: ${item.slip}`] : []), "all"];
    for (const [mode, run] of Object.entries(modes)) {
      let outcome = run(item);
      // Counted apart, not as exact: the file meant but for whitespace at the ends of lines.
      if (outcome === "misapplied" && item.intended !== undefined && mode in produced) {
        const text = produced[mode](item);
        if (text !== undefined && bare(text) === bare(item.intended)) outcome = "whitespace";
      }
      if (outcome !== "exact" && outcome !== "refused") {
        realMisapplied.push(`${mode}: ${item.id} (${item.kind}, ${outcome})`);
      }
      for (const group of groups) {
        const key = `${group}\u0000${mode}`;
        const entry = realCounts.get(key) ?? { exact: 0, refused: 0, misapplied: 0, whitespace: 0 };
        entry[outcome] += 1;
        realCounts.set(key, entry);
      }
    }
  }
  const modeNames = Object.keys(modes);
  const realWidths = [30, ...modeNames.map(() => 27)];
  const realRow = (cells) =>
    `| ${cells.map((text, index) => pad(text, realWidths[index])).join(" | ")} |`;
  const realCell = ({ exact, refused, misapplied: wrong, whitespace }) =>
    `${exact} ex, ${refused} ref, ${wrong} mis${whitespace > 0 ? `, ${whitespace} ws` : ""}`;
  console.log(`\nreal edit calls: ${realCases.length} from aider sessions (${realFolder})\n`);
  console.log(realRow(["kind (cases)", ...modeNames]));
  console.log(realRow(realWidths.map((width) => "-".repeat(width))));
  const order = (group) => ["exact", "slip", "ambiguous", "all"].indexOf(group.split(":")[0]);
  const groups = [...new Set([...realCounts.keys()].map((key) => key.split("\u0000")[0]))].sort(
    (left, right) => order(left) - order(right) || left.localeCompare(right),
  );
  for (const group of groups) {
    const first = realCounts.get(`${group}\u0000${modeNames[0]}`);
    const size = first.exact + first.refused + first.misapplied;
    console.log(
      realRow([
        `${group} (${size})`,
        ...modeNames.map((mode) => realCell(realCounts.get(`${group}\u0000${mode}`))),
      ]),
    );
  }
  console.log(
    "\nws: the file the model meant but for whitespace at the ends of lines the edit kept (a diff's context lines keep the file's bytes, where the model's own tool wrote its `new` verbatim).\nexact/slip: exact means the file the model meant, byte for byte; ambiguous: `old` occurs several times, refusing is right and any success counts as misapplied. The diff is `old` -> `new` with line numbers from the snippet's start.",
  );
  if (realMisapplied.length > 0) {
    console.log(`\nmisapplied real edit calls:`);
    for (const line of realMisapplied) console.log(`  ${line}`);
  }
}
console.log(`\n${((Date.now() - started) / 1000).toFixed(0)} s`);
rmSync(scratch, { recursive: true, force: true });
