// Benchmark: apply_diff's engine against GNU patch, `git apply --recount` and jsdiff's applyPatch
// on real diffs with the mistakes models make, and edit_file's matching on the same hunks.
//
//   npx tsc -b && node bench/edits/run.mjs [--per-package 350] [--seed 1]
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

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../..");
const cache = path.join(repoRoot, "bench/.cache/edits");
const argument = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const perPackage = argument("--per-package", 350);
const seed = argument("--seed", 1);

const engineEntry = path.join(repoRoot, "packages/coding-agent/dist/tools/diff/index.js");
if (!existsSync(engineEntry)) {
  console.error("Build first: npx tsc -b");
  process.exit(1);
}
const { parseUnifiedDiff, applyFilePatch, locateTolerantly } = await import(engineEntry);

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
// Perturbations: each takes a case { oldText, newText, diff } and returns one, or undefined when
// it does not apply to that file.

/** The diff's hunks: header numbers and body lines (with their marker character). */
function splitHunks(diff) {
  const lines = diff.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const head = [];
  const hunks = [];
  for (const line of lines) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/.exec(line);
    if (header !== null) {
      hunks.push({
        oldStart: Number(header[1]),
        oldCount: header[2] === undefined ? 1 : Number(header[2]),
        newStart: Number(header[3]),
        newCount: header[4] === undefined ? 1 : Number(header[4]),
        tail: header[5],
        body: [],
      });
    } else if (hunks.length === 0) head.push(line);
    else hunks.at(-1).body.push(line);
  }
  return { head, hunks };
}

function joinHunks({ head, hunks }, header = defaultHeader) {
  const lines = [...head];
  for (const hunk of hunks) lines.push(header(hunk), ...hunk.body);
  return `${lines.join("\n")}\n`;
}

function defaultHeader(hunk) {
  return `@@ -${hunk.oldStart},${hunk.oldCount} +${hunk.newStart},${hunk.newCount} @@${hunk.tail}`;
}

function recount(hunk) {
  let oldCount = 0;
  let newCount = 0;
  for (const line of hunk.body) {
    if (line.startsWith("\\")) continue;
    if (!line.startsWith("+")) oldCount += 1;
    if (!line.startsWith("-")) newCount += 1;
  }
  return { ...hunk, oldCount, newCount };
}

const PERTURBATIONS = {
  /** Every hunk's line numbers moved by 3 to 40 lines, up or down. */
  "shifted-lines": (item, next) => {
    const parsed = splitHunks(item.diff);
    for (const hunk of parsed.hunks) {
      const shift = Math.round((3 + next() * 37) * (next() < 0.5 ? -1 : 1));
      hunk.oldStart = Math.max(1, hunk.oldStart + shift);
      hunk.newStart = Math.max(1, hunk.newStart + shift);
    }
    return { ...item, diff: joinHunks(parsed) };
  },
  /** Counts that do not describe the body: off by a few, or left out. */
  "wrong-counts": (item, next) => {
    const parsed = splitHunks(item.diff);
    const header = (hunk) =>
      next() < 0.3
        ? `@@ -${hunk.oldStart} +${hunk.newStart} @@`
        : `@@ -${hunk.oldStart},${hunk.oldCount + 1 + Math.floor(next() * 4)} +${hunk.newStart},${Math.max(0, hunk.newCount - 1 - Math.floor(next() * 3))} @@`;
    return { ...item, diff: joinHunks(parsed, header) };
  },
  /** No file headers at all, or headers naming another file (the path is passed separately). */
  headers: (item, next) => {
    const parsed = splitHunks(item.diff);
    parsed.head = next() < 0.5 ? [] : ["--- original.js", "+++ modified.js"];
    return { ...item, diff: joinHunks(parsed) };
  },
  /** Trailing whitespace added to or removed from half the context lines. */
  "whitespace-drift": (item, next) => {
    const parsed = splitHunks(item.diff);
    let changed = false;
    for (const hunk of parsed.hunks) {
      hunk.body = hunk.body.map((line) => {
        if (!line.startsWith(" ") || line.trim() === "" || next() < 0.5) return line;
        changed = true;
        return line === line.trimEnd() ? `${line}  ` : line.trimEnd();
      });
    }
    return changed ? { ...item, diff: joinHunks(parsed) } : undefined;
  },
  /** The file has CRLF line endings; the diff stays LF. */
  "crlf-file": (item) => {
    if (item.oldText.includes("\r") || item.newText.includes("\r")) return undefined;
    const crlf = (text) => text.replaceAll("\n", "\r\n");
    return { ...item, oldText: crlf(item.oldText), newText: crlf(item.newText) };
  },
  /** Context cut to one line per side, or two more correct context lines per side (counts kept). */
  context: (item, next) => {
    const parsed = splitHunks(item.diff);
    const oldLines = item.oldText.split("\n");
    const trim = next() < 0.5;
    for (const hunk of parsed.hunks) {
      const first = hunk.body.findIndex((line) => !line.startsWith(" ") && line !== "");
      let last = hunk.body.length - 1;
      while (last >= 0 && (hunk.body[last].startsWith(" ") || hunk.body[last] === "")) last -= 1;
      if (trim) {
        const top = Math.max(0, first - 1);
        hunk.body = hunk.body.slice(top, last + 2);
        hunk.oldStart += top;
        hunk.newStart += top;
      } else {
        const before = oldLines.slice(Math.max(0, hunk.oldStart - 3), hunk.oldStart - 1);
        const afterStart = hunk.oldStart - 1 + hunk.oldCount;
        const hasMarker = hunk.body.some((line) => line.startsWith("\\"));
        const after = hasMarker ? [] : oldLines.slice(afterStart, afterStart + 2);
        if (afterStart + after.length >= oldLines.length)
          after.splice(Math.max(0, oldLines.length - 1 - afterStart));
        hunk.body = [
          ...before.map((line) => ` ${line}`),
          ...hunk.body,
          ...after.map((line) => ` ${line}`),
        ];
        hunk.oldStart -= before.length;
        hunk.newStart -= before.length;
      }
      Object.assign(hunk, recount(hunk));
    }
    return { ...item, diff: joinHunks(parsed) };
  },
  /**
   * The file holds the first hunk's old text twice: a copy is appended at the end, below the real
   * block, so the diff's line numbers are still right and single out the real block. Every tool
   * should apply this exactly; a tool that takes the first match in the file would not.
   */
  "duplicate-below": (item) => {
    const block = firstHunkOldBlock(item);
    if (block === undefined) return undefined;
    const separator = item.oldText.endsWith("\n") || item.oldText === "" ? "" : "\n";
    const suffix = `${separator}${block.join("\n")}\n`;
    // The expected file keeps the copy unchanged after the real block's change.
    const newSeparator = item.newText.endsWith("\n") || item.newText === "" ? "" : "\n";
    return {
      ...item,
      oldText: item.oldText + suffix,
      newText: `${item.newText}${newSeparator}${block.join("\n")}\n`,
    };
  },
  /**
   * AMBIGUOUS BY CONSTRUCTION, so not scored as a perturbation a tool should apply: a copy of the
   * first hunk's old text is put at the top of the file and the diff's line numbers are left stale
   * (the model read the file before the copy was made). The stale number is nearer the real block
   * but more than a few lines from both. The specification's rule is "never guess": the correct
   * outcome is a conflict listing both places. Nearest-wins tools happen to be right here and
   * would be wrong had the copy been the nearer one.
   */
  "ambiguous-stale": (item) => {
    const parsed = splitHunks(item.diff);
    const [first] = parsed.hunks;
    const block = firstHunkOldBlock(item);
    if (first === undefined || block === undefined || first.oldStart <= block.length + 4) {
      return undefined;
    }
    const prefix = `${block.join("\n")}\n`;
    return { ...item, oldText: prefix + item.oldText, newText: prefix + item.newText };
  },
};

/** The old side of the first hunk (context and removed lines), or `undefined` when unusable. */
function firstHunkOldBlock(item) {
  const parsed = splitHunks(item.diff);
  const [first] = parsed.hunks;
  if (first === undefined || first.body.some((line) => line.startsWith("\\"))) return undefined;
  const block = first.body.filter((line) => !line.startsWith("+")).map((line) => line.slice(1));
  return block.length === 0 ? undefined : block;
}

// ---------------------------------------------------------------------------------------------
// The tools under test. Each returns "exact", "refused" or "misapplied".

function judge(success, text, expected) {
  if (!success) return "refused";
  return text === expected ? "exact" : "misapplied";
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

const TOOLS = {
  pleach: runEngine,
  "GNU patch": runPatch,
  "git apply --recount": runGitApply,
  jsdiff: runJsdiff,
};

// ---------------------------------------------------------------------------------------------
// edit_file: each hunk of the clean diff as a search/replace edit, and two imperfect versions.

/** The hunks of a clean diff as { old, new, start } with the true 0-based start line. */
function hunkEdits(item) {
  const { hunks } = splitHunks(item.diff);
  return hunks
    .filter((hunk) => !hunk.body.some((line) => line.startsWith("\\")) && hunk.oldCount > 0)
    .map((hunk) => {
      const before = hunk.body.filter((line) => !line.startsWith("+")).map((line) => line.slice(1));
      const after = hunk.body.filter((line) => !line.startsWith("-")).map((line) => line.slice(1));
      return { before, after, start: hunk.oldStart - 1 };
    });
}

/** edit_file's decision for one edit: exactly once, else (tolerant) a unique tolerant match. */
function editOutcome(fileText, old, replacement, expected, start) {
  const first = fileText.indexOf(old);
  let text;
  let line;
  if (first !== -1) {
    if (fileText.indexOf(old, first + 1) !== -1) return "refused";
    text = fileText.slice(0, first) + replacement + fileText.slice(first + old.length);
    line = fileText.slice(0, first).split("\n").length - 1;
  } else {
    const match = locateTolerantly(fileText, old, replacement);
    if (match.status !== "unique") return "refused";
    text = fileText.slice(0, match.start) + match.replacement + fileText.slice(match.end);
    line = match.startLine - 1;
  }
  if (text === expected) return "exact";
  return line === start ? "wrong-bytes" : "wrong-place";
}

function editCases(item) {
  const cases = [];
  const lines = item.oldText.split("\n");
  for (const edit of hunkEdits(item)) {
    // Only hunks whose old text is where the header says (always, for a clean git diff).
    if (edit.before.some((line, index) => lines[edit.start + index] !== line)) continue;
    const expectedLines = [
      ...lines.slice(0, edit.start),
      ...edit.after,
      ...lines.slice(edit.start + edit.before.length),
    ];
    const expected = expectedLines.join("\n");
    const old = `${edit.before.join("\n")}\n`;
    const replacement = `${edit.after.join("\n")}\n`;
    if (edit.start + edit.before.length >= lines.length) continue;
    cases.push({
      kind: "clean",
      fileText: item.oldText,
      old,
      replacement,
      expected,
      start: edit.start,
    });
    const drifted = edit.before.map((line, index) =>
      index % 2 === 0 && line.trim() !== "" ? `${line.trimEnd()} ` : line,
    );
    cases.push({
      kind: "whitespace-drift",
      fileText: item.oldText,
      old: `${drifted.join("\n")}\n`,
      replacement,
      expected,
      start: edit.start,
    });
    if (!item.oldText.includes("\r")) {
      cases.push({
        kind: "crlf-file",
        fileText: item.oldText.replaceAll("\n", "\r\n"),
        old,
        replacement,
        expected: expected.replaceAll("\n", "\r\n"),
        start: edit.start,
      });
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------

const started = Date.now();
mkdirSync(cache, { recursive: true });
const corpus = [];
let packagesUsed = 0;
for (const [name, older, newer] of PAIRS) {
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

const kinds = ["clean", ...Object.keys(PERTURBATIONS)];
const counts = new Map();
const count = (kind, tool, outcome) => {
  const key = `${kind}\u0000${tool}`;
  const entry = counts.get(key) ?? { exact: 0, refused: 0, misapplied: 0 };
  entry[outcome] += 1;
  counts.set(key, entry);
};
const misapplied = [];
rmSync(path.join(cache, "misapplied"), { recursive: true, force: true });
const next = random(seed * 7919);
for (const [index, item] of corpus.entries()) {
  for (const kind of kinds) {
    const variant = kind === "clean" ? item : PERTURBATIONS[kind](item, next);
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
  if ((index + 1) % 200 === 0) log(`${index + 1}/${corpus.length} file diffs run`);
}

const editCounts = new Map();
for (const item of corpus) {
  for (const edit of editCases(item)) {
    const outcome = editOutcome(
      edit.fileText,
      edit.old,
      edit.replacement,
      edit.expected,
      edit.start,
    );
    const entry = editCounts.get(edit.kind) ?? {
      exact: 0,
      refused: 0,
      "wrong-bytes": 0,
      "wrong-place": 0,
    };
    entry[outcome] += 1;
    editCounts.set(edit.kind, entry);
  }
}

// ---------------------------------------------------------------------------------------------

const toolNames = Object.keys(TOOLS);
const cell = ({ exact, refused, misapplied: wrong }) => {
  const total = exact + refused + wrong;
  return `${((100 * exact) / total).toFixed(1)}% exact, ${refused} ref, ${wrong} mis`;
};
const pad = (text, width) => text.padEnd(width);
const widths = [18, ...toolNames.map(() => 30)];
const row = (cells) => `| ${cells.map((text, index) => pad(text, widths[index])).join(" | ")} |`;
console.log(
  `\napply_diff: ${corpus.length} real file diffs from ${packagesUsed} npm packages (seed ${seed})\n`,
);
console.log(row(["kind (cases)", ...toolNames]));
console.log(row(widths.map((width) => "-".repeat(width))));
const totals = Object.fromEntries(
  toolNames.map((tool) => [tool, { exact: 0, refused: 0, misapplied: 0 }]),
);
const totalsNoDup = Object.fromEntries(
  toolNames.map((tool) => [tool, { exact: 0, refused: 0, misapplied: 0 }]),
);
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
  if (kind === "clean") continue;
  for (const tool of toolNames) {
    for (const [key, value] of Object.entries(counts.get(`${kind}\u0000${tool}`))) {
      totals[tool][key] += value;
      if (kind !== "ambiguous-stale") totalsNoDup[tool][key] += value;
    }
  }
}
console.log(row(["perturbed (scored)", ...toolNames.map((tool) => cell(totalsNoDup[tool]))]));
console.log(row(["+ ambiguous-stale", ...toolNames.map((tool) => cell(totals[tool]))]));
console.log(
  "\nexact: success reported and the file equals the new version byte for byte; ref: refused; mis: success reported but the file differs.",
);
console.log(
  "duplicate-below: the hunk's old text occurs twice, the diff's line numbers are right: every tool should apply it exactly.",
);
console.log(
  "ambiguous-stale: not scored: the hunk's old text occurs twice and the stale line number singles neither out; the specified outcome is a conflict (refusal), so pleach's refusals there are correct, and nearest-wins tools are right only because the real block happens to be nearer.",
);
console.log("\nedit_file (tolerant: true) on the same hunks as search/replace edits:\n");
const editColumns = ["exact", "refused", "wrong-bytes", "wrong-place"];
console.log(`| ${pad("kind", 18)} | ${editColumns.map((name) => pad(name, 11)).join(" | ")} |`);
console.log(`| ${"-".repeat(18)} | ${editColumns.map(() => "-".repeat(11)).join(" | ")} |`);
for (const [kind, entry] of editCounts) {
  console.log(
    `| ${pad(kind, 18)} | ${editColumns.map((name) => pad(String(entry[name]), 11)).join(" | ")} |`,
  );
}
if (misapplied.length > 0) {
  console.log(`\npleach misapplied ${misapplied.length} case(s):`);
  for (const line of misapplied.slice(0, 20)) console.log(`  ${line}`);
}
console.log(`\n${((Date.now() - started) / 1000).toFixed(0)} s`);
rmSync(scratch, { recursive: true, force: true });
