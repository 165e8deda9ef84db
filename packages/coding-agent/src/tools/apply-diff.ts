import path from "node:path";
import { defineTool, isToolError, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { ExecResult, SandboxClient } from "../sandbox/index.js";
import { applyFilePatch } from "./diff/apply.js";
import { type FilePatch, parseUnifiedDiff } from "./diff/parse.js";
import { diffFileNames } from "./file-state.js";
import { readTextFile } from "./read-text-file.js";
import { shellQuote } from "./shell-quote.js";

/** The workspace file the diff is written to before `patch` reads it (seed 000's wire protocol). */
export const APPLY_DIFF_PATCH_FILE = ".pleach-apply-diff.patch";

/** Input of `apply_diff`. */
export const applyDiffInputSchema = z
  .object({
    path: z
      .string()
      .min(1)
      .describe(
        'The file to patch, relative to the workspace root; it wins over the file names in the diff\'s ---/+++ lines. "." applies the diff to the files its headers name (needed for a diff of several files, or one that creates or deletes a file).',
      ),
    diff: z
      .string()
      .describe(
        "A unified diff, as `diff -u` or `git diff` print it: optional `--- a/file`/`+++ b/file` " +
          "lines, then hunks that start with `@@ -start,count +start,count @@` and whose lines " +
          "start with a space (context), `-` (removed) or `+` (added).",
      ),
    engine: z
      .enum(["pleach", "patch"])
      .optional()
      .describe(
        'How to apply: "pleach" (default) locates each hunk by its content, all hunks or none; "patch" runs GNU `patch -p0` in the workspace (seed protocol: fuzz, partial application).',
      ),
    partial: z
      .boolean()
      .optional()
      .describe(
        "pleach engine only: apply the hunks that fit even when others conflict (default false: nothing is written unless every hunk applies).",
      ),
  })
  .strict();

const hunkReportSchema = z.object({
  file: z.string().describe("The file the hunk belongs to."),
  hunk: z.number().int().min(1).describe("The hunk's number within its file, as in `Hunk #N`."),
  status: z
    .enum(["applied", "already-applied", "conflict", "skipped"])
    .describe(
      "`already-applied`: its new text is in the file and its old text is not, so it was left alone; `skipped`: it fit, but another hunk conflicted and nothing was written.",
    ),
  line: z.number().int().optional().describe("1-based line of the original file where it landed."),
  offset: z.number().int().optional().describe("`line` minus the line its @@ header gave."),
  tolerance: z
    .enum(["exact", "line-endings", "trailing-whitespace", "unicode-punctuation", "indentation"])
    .optional()
    .describe("How loosely lines were compared to locate it."),
  contextDropped: z
    .number()
    .int()
    .optional()
    .describe("Outer context lines left out to locate it."),
  chosenByHint: z
    .boolean()
    .optional()
    .describe("Its text matched several places and the @@ line number chose one."),
  message: z.string().optional().describe("Why it conflicted."),
});

/** Output of `apply_diff`. */
export const applyDiffOutputSchema = z.object({
  hunksApplied: z.number().int().nonnegative().describe("How many hunks were applied and written."),
  conflicts: z
    .array(z.string())
    .describe(
      "One `Hunk #N FAILED ...` line per hunk that did not apply (with the patch engine, `patch`'s own lines). Empty when every hunk applied.",
    ),
  hunks: z
    .array(hunkReportSchema)
    .optional()
    .describe("pleach engine: where each hunk landed and how."),
  files: z
    .array(
      z.object({
        path: z.string(),
        action: z.enum(["modified", "created", "deleted", "unchanged"]),
      }),
    )
    .optional()
    .describe("pleach engine: what happened to each file of the diff."),
});

/** Input of `apply_diff`. */
export type ApplyDiffInput = z.input<typeof applyDiffInputSchema>;
/** Output of `apply_diff`. */
export type ApplyDiffOutput = z.output<typeof applyDiffOutputSchema>;
/** What happened to one hunk, in {@link ApplyDiffOutput}. */
export type ApplyDiffHunkReport = z.output<typeof hunkReportSchema>;

/** Options of {@link createApplyDiffTool}. */
export interface ApplyDiffToolOptions {
  /**
   * How long `patch` (the "patch" engine) or `rm` (a deleted file) may run, in milliseconds.
   * @default 60_000
   */
  timeoutMs?: number;
}

const DESCRIPTION = `Apply a unified diff to workspace files.

Give the file's path and a diff of it (\`--- a/file\`/\`+++ b/file\` lines optional; hunks starting \`@@ -start,count +start,count @@\`; wrong or missing line numbers and counts are tolerated). Each hunk is found by its content: the line numbers only choose between several equally good places. Small differences in the context are tolerated and reported (line endings, trailing whitespace, curly quotes, indentation, an outer context line that no longer matches). A hunk whose text matches several places is refused rather than guessed; add context lines that occur only where you mean. A hunk already present is reported, not applied twice. The file keeps its line endings, byte order mark and final newline.

All or nothing: if any hunk conflicts nothing is written (pass partial: true to apply the others). For a diff of several files, or one that creates (--- /dev/null) or deletes (+++ /dev/null) files, pass path ".". On conflicts, read the file again and send a corrected diff, or use edit_file. engine: "patch" runs GNU patch instead.`;

const HUNK_HEADER = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/**
 * Create seed 000's `apply_diff` tool.
 *
 * The default engine ("pleach") runs in-process over the client's `readFile`/`writeFile`, so the
 * sandbox needs no `patch`: every file of the diff is read and every hunk placed before anything
 * is written (see {@link applyFilePatch}), and a deleted file is removed with `rm -f` through
 * `exec`, before the writes, so a refusal there leaves everything as it was.
 *
 * `engine: "patch"` keeps seed 000's wire protocol: the diff is written to
 * `.pleach-apply-diff.patch` in the workspace and `patch -p0 -- <path> < .pleach-apply-diff.patch`
 * runs. Flags beyond `-p0`, all GNU patch: `--forward` so an already-applied diff is skipped and
 * reported rather than silently reversed, `--batch` so it never asks, `--verbose` so every applied
 * hunk prints a `Hunk #N succeeded` line (without it, hunks that apply exactly print nothing),
 * `--no-backup-if-mismatch` so no `.orig` file is left beside the target, and `--reject-file=-` so
 * no `.rej` file is either: the failed hunks are the ones named in `conflicts`. The patch file is
 * removed afterwards whatever happened.
 */
export function createApplyDiffTool(
  client: SandboxClient,
  { timeoutMs = 60_000 }: ApplyDiffToolOptions = {},
): PluginToolDefinition<typeof applyDiffInputSchema, typeof applyDiffOutputSchema> {
  return defineTool({
    name: "apply_diff",
    description: DESCRIPTION,
    inputSchema: applyDiffInputSchema,
    outputSchema: applyDiffOutputSchema,
    annotations: { destructiveHint: true },
    // "." means the files the diff's headers name; any other path is the one file it changes.
    files: {
      writes: ({ path: target, diff }) =>
        target === "." || target === "./" ? diffFileNames(diff) : [target],
    },
    async execute(
      { path: requestedPath, diff, engine = "pleach", partial = false },
      { abortSignal },
    ) {
      if (engine === "pleach") {
        return applyWithEngine(client, { requestedPath, diff, partial, timeoutMs, abortSignal });
      }
      const shape = scanDiff(diff);
      checkDiffShape(shape);
      // Both the client and the shell must see the same path: the client resolves `..` lexically,
      // the shell physically (through symlinks), so `..` is removed here first.
      const target = path.posix.normalize(requestedPath);
      // Reading the file confines its path by realpath and tells a missing file apart.
      const current = await readTarget(client, target);
      await client.writeFile(APPLY_DIFF_PATCH_FILE, diffForFile(shape, current));
      let result: ExecResult;
      try {
        result = await client.exec(
          `patch -p0 --forward --batch --verbose --no-backup-if-mismatch --reject-file=- -- ${shellQuote(target)} < ${APPLY_DIFF_PATCH_FILE}`,
          { timeoutMs, abortSignal, maxOutputBytes: 1024 * 1024 },
        );
      } finally {
        await client.exec(`rm -f -- ${APPLY_DIFF_PATCH_FILE}`, { timeoutMs: 10_000 }).catch(() => {
          // Removal is best effort; a failure here must not hide the outcome of the patch.
        });
      }
      return outcomeOf(result, shape.hunkCount, timeoutMs);
    },
    toModelOutput(output) {
      if (output.hunks !== undefined) return engineModelOutput(output);
      const { hunksApplied, conflicts } = output;
      const applied = `applied ${hunksApplied} hunk(s)`;
      if (conflicts.length === 0) return { output: applied, error: false };
      const hint = conflicts.some((line) => line.includes("previously applied"))
        ? "The diff looks already applied, so it was skipped. Read the file to check."
        : "Hunks that failed were not applied; the others were. Read the file again and send a " +
          "fresh diff for the failed hunks only, or use edit_file.";
      return {
        output: `${applied}; ${conflicts.length} conflict(s):\n${conflicts.join("\n")}\n${hint}`,
        error: true,
      };
    },
  });
}

const NO_HUNKS_MESSAGE =
  "the diff has no hunks. apply_diff needs a unified diff: an optional `--- a/file` and " +
  "`+++ b/file` pair, then hunks that start with a line like `@@ -12,4 +12,5 @@` followed by " +
  "lines starting with a space (unchanged), `-` (removed) or `+` (added).";

interface EngineRequest {
  requestedPath: string;
  diff: string;
  partial: boolean;
  timeoutMs: number;
  abortSignal: AbortSignal | undefined;
}

interface FileTarget {
  path: string;
  patch: FilePatch;
}

/** Which workspace file each file section of the diff changes (see `path`'s description). */
function resolveTargets(patches: readonly FilePatch[], requestedPath: string): FileTarget[] {
  const named = (patch: FilePatch) => patch.newPath ?? patch.oldPath;
  const requested = path.posix.normalize(requestedPath);
  if (patches.length === 1 && requested !== "." && requested !== "./") {
    return patches.map((patch) => ({ path: requested, patch }));
  }
  if (patches.length > 1 && requested !== ".") {
    const names = patches.map((patch) => named(patch) ?? "?");
    throw new ToolError(
      "INVALID_INPUT",
      `the diff changes ${patches.length} files (${names.join(", ")}), so the file names in its ---/+++ lines decide where each part goes: pass path "." to apply it to those files (relative to the workspace root), or split the diff and call apply_diff once per file with that file's path.`,
      { details: { files: names } },
    );
  }
  const targets = patches.map((patch) => {
    const name = named(patch);
    if (name === undefined) {
      throw new ToolError(
        "INVALID_INPUT",
        "path \".\" takes the file names from the diff's `--- a/file` and `+++ b/file` lines, and this diff has none. Pass the file's path instead, or add those lines.",
      );
    }
    return { path: path.posix.normalize(name), patch };
  });
  const seen = new Set<string>();
  for (const target of targets) {
    if (seen.has(target.path)) {
      throw new ToolError(
        "INVALID_INPUT",
        `the diff has two sections for ${target.path}; merge their hunks into one section.`,
      );
    }
    seen.add(target.path);
  }
  return targets;
}

async function applyWithEngine(
  client: SandboxClient,
  { requestedPath, diff, partial, timeoutMs, abortSignal }: EngineRequest,
): Promise<ApplyDiffOutput> {
  const patches = parseUnifiedDiff(diff);
  if (patches.length === 0) throw new ToolError("INVALID_INPUT", NO_HUNKS_MESSAGE);
  const targets = resolveTargets(patches, requestedPath);
  const several = targets.length > 1;
  const results = [];
  for (const target of targets) {
    const original = await readOriginal(client, target);
    const result = applyFilePatch(original, target.patch, several ? { label: target.path } : {});
    results.push({ target, original, result });
  }
  const conflicts = results.flatMap(({ result }) => result.conflicts);
  const write = conflicts.length === 0 || partial;
  const hunks: ApplyDiffHunkReport[] = results.flatMap(({ target, result }) =>
    result.hunks.map((report) => ({
      file: target.path,
      ...report,
      status: report.status === "applied" && !write ? "skipped" : report.status,
    })),
  );
  const files: NonNullable<ApplyDiffOutput["files"]> = [];
  const changes = results.filter(({ result, original }) => result.text !== (original ?? null));
  if (write) {
    // Deletions first: `rm` may be refused (no OS sandbox, read-only), and then nothing else changed.
    for (const { target, original, result } of changes) {
      if (result.text !== null || original === undefined) continue;
      const removed = await client.exec(`rm -f -- ${shellQuote(target.path)}`, {
        timeoutMs,
        abortSignal,
      });
      if (removed.exitCode !== 0) {
        throw new ToolError(
          "COMMAND_FAILED",
          `could not delete ${target.path}: ${removed.stderr.trim() || `rm exited with ${removed.exitCode}`}`,
        );
      }
    }
    for (const { target, result } of changes) {
      if (result.text !== null) await client.writeFile(target.path, result.text);
    }
  }
  for (const { target, original, result } of results) {
    const changed = write && result.text !== (original ?? null);
    files.push({
      path: target.path,
      action: !changed
        ? "unchanged"
        : result.text === null
          ? "deleted"
          : original === undefined
            ? "created"
            : "modified",
    });
  }
  return {
    hunksApplied: hunks.filter((report) => report.status === "applied").length,
    conflicts,
    hunks,
    files,
  };
}

/** The file's current text; `undefined` when a diff that creates or deletes it finds it missing. */
async function readOriginal(
  client: SandboxClient,
  target: FileTarget,
): Promise<string | undefined> {
  try {
    return await readTextFile(client, target.path, {
      toolName: "apply_diff",
      missingHint:
        "apply_diff changes existing files unless the diff creates one (`--- /dev/null`): check the path (list_files helps), or create the file with write_file.",
    });
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_FOUND" && target.patch.operation !== "modify") {
      return undefined;
    }
    throw error;
  }
}

const TOLERANCE_WORDS: Record<string, string> = {
  "line-endings": "line endings ignored",
  "trailing-whitespace": "whitespace at line ends ignored",
  "unicode-punctuation": "Unicode quotes/dashes/spaces read as ASCII",
  indentation: "indentation ignored, added lines re-indented",
};

function engineModelOutput(output: ApplyDiffOutput): { output: string; error: boolean } {
  const { hunksApplied, conflicts, hunks = [], files = [] } = output;
  const several = files.length > 1;
  const name = (report: ApplyDiffHunkReport) =>
    several ? `${report.file} hunk #${report.hunk}` : `Hunk #${report.hunk}`;
  const notes: string[] = [];
  for (const report of hunks) {
    if (report.status === "already-applied") {
      notes.push(`${name(report)} is already applied (at line ${report.line ?? "?"}); left as is.`);
      continue;
    }
    if (report.status !== "applied" && report.status !== "skipped") continue;
    const details: string[] = [];
    if (report.offset !== undefined && report.offset !== 0) {
      details.push(`offset ${report.offset > 0 ? "+" : ""}${report.offset} lines`);
    }
    if (report.tolerance !== undefined && report.tolerance !== "exact") {
      details.push(TOLERANCE_WORDS[report.tolerance] ?? report.tolerance);
    }
    if (report.contextDropped !== undefined) {
      details.push(`${report.contextDropped} outer context line(s) not matched`);
    }
    if (report.chosenByHint) details.push("chosen among several matches by its line number");
    if (details.length > 0) {
      const verb = report.status === "applied" ? "applied" : "would apply";
      notes.push(`${name(report)} ${verb} at line ${report.line ?? "?"} (${details.join("; ")}).`);
    }
  }
  const changed = files.filter((file) => file.action !== "unchanged");
  const fileList = changed.map((file) => `${file.action} ${file.path}`).join(", ");
  const applied = `applied ${hunksApplied} hunk(s)${several && changed.length > 0 ? ` (${fileList})` : ""}`;
  if (conflicts.length === 0) {
    return { output: [applied, ...notes].join("\n"), error: false };
  }
  const written = hunksApplied > 0;
  const hint = written
    ? "The hunks that failed were not applied; the others were (partial). Read the file again and send a diff for the failed hunks only, or use edit_file."
    : "Nothing was written: apply_diff applies every hunk or none. Read the file again, fix the failed hunks and send the whole diff again (or pass partial: true to apply the others), or use edit_file.";
  return {
    output: `${applied}; ${conflicts.length} conflict(s):\n${conflicts.join("\n")}\n${[...notes, hint].join("\n")}`,
    error: true,
  };
}

/** What a line of a unified diff is, judged by the hunk headers' line counts. */
type DiffLineKind = "hunk-header" | "file-header" | "body" | "no-newline-marker" | "other";

interface DiffShape {
  lines: string[];
  kinds: DiffLineKind[];
  hunkCount: number;
  /** The `+++` file names of each file section, in order. */
  sections: string[];
}

/**
 * Split a diff into lines (CRs kept) and classify each. A `---`/`+++` pair is a file header only
 * outside a hunk, so a removed line `-- x` followed by an added `++ y` is not taken for one.
 */
function scanDiff(diff: string): DiffShape {
  const lines = diff.split("\n");
  const shape: DiffShape = { lines, kinds: [], hunkCount: 0, sections: [] };
  let oldLeft = 0;
  let newLeft = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] ?? "").replace(/\r$/, "");
    const inHunk = oldLeft > 0 || newLeft > 0;
    const header = HUNK_HEADER.exec(line);
    let kind: DiffLineKind = "body";
    if (header !== null) {
      kind = "hunk-header";
      shape.hunkCount++;
      oldLeft = Number(header[1] ?? 1);
      newLeft = Number(header[2] ?? 1);
    } else if (inHunk && (line === "" || line.startsWith(" "))) {
      oldLeft--;
      newLeft--;
    } else if (inHunk && line.startsWith("-")) {
      oldLeft--;
    } else if (inHunk && line.startsWith("+")) {
      newLeft--;
    } else if (line.startsWith("\\")) {
      kind = "no-newline-marker";
    } else if (line.startsWith("--- ") && lines[index + 1]?.startsWith("+++ ")) {
      shape.sections.push((lines[index + 1] ?? "").slice(4).split("\t")[0]?.trim() ?? "");
      shape.kinds.push("file-header");
      kind = "file-header";
      index++;
    } else {
      kind = "other";
      oldLeft = 0;
      newLeft = 0;
    }
    shape.kinds.push(kind);
  }
  return shape;
}

function checkDiffShape({ hunkCount, sections }: DiffShape): void {
  if (hunkCount === 0) throw new ToolError("INVALID_INPUT", NO_HUNKS_MESSAGE);
  if (sections.length > 1) {
    throw new ToolError(
      "INVALID_INPUT",
      `the diff changes ${sections.length} files (${sections.join(", ")}), but apply_diff patches ` +
        "one file per call. Split the diff and call apply_diff once per file, with that file's path.",
      { details: { sections } },
    );
  }
}

async function readTarget(client: SandboxClient, target: string): Promise<string> {
  try {
    return await client.readFile(target);
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_FOUND") {
      throw new ToolError(
        "NOT_FOUND",
        `${error.message}. apply_diff only changes existing files: check the path (list_files ` +
          "helps), or create the file with write_file.",
        { cause: error, details: error.details },
      );
    }
    throw error;
  }
}

/**
 * The diff to hand to `patch`: ending in a newline, its hunk lines given the file's line ending.
 * GNU patch compares lines byte for byte and fails a hunk "with different line endings" otherwise,
 * and a model writes LF diffs for CRLF files. Patch strips CRs from a diff itself only when its
 * header lines end in CR too, so here headers stay LF and body lines get CRLF. A file that mixes
 * both endings gets the diff as written.
 */
function diffForFile({ lines, kinds }: DiffShape, fileText: string): string {
  const crlfCount = fileText.split("\r\n").length - 1;
  const lfCount = fileText.split("\n").length - 1;
  // The element after a final newline is empty and no line.
  const content = lines.at(-1) === "" ? lines.slice(0, -1) : lines;
  let adjusted = content;
  if (crlfCount === 0) {
    adjusted = content.map((line) => line.replace(/\r$/, ""));
  } else if (crlfCount === lfCount) {
    adjusted = content.map((line, index) => {
      const bare = line.replace(/\r$/, "");
      if (kinds[index] !== "body") return bare;
      // A line followed by "\ No newline at end of file" has no line ending in the file.
      return kinds[index + 1] === "no-newline-marker" ? bare : `${bare}\r`;
    });
  }
  return `${adjusted.join("\n")}\n`;
}

const CONFLICT_LINE =
  /^(?:Hunk #\d+ (?:FAILED|ignored)\b|Reversed \(or previously applied\) patch detected|.*refusing to patch|patch: )/;

function outcomeOf(result: ExecResult, hunksInDiff: number, timeoutMs: number): ApplyDiffOutput {
  if (result.timedOut) {
    throw new ToolError("TIMEOUT", `patch ran past ${timeoutMs} ms and was stopped`);
  }
  const stdoutLines = result.stdout.split("\n").map((line) => line.trimEnd());
  const stderrLines = result.stderr.split("\n").map((line) => line.trimEnd());
  if (result.exitCode === 127 && /patch: (?:command )?not found/.test(result.stderr)) {
    throw new ToolError(
      "INTERNAL",
      "this sandbox has no `patch` command, so apply_diff cannot run here. Use edit_file instead.",
    );
  }
  const succeeded = stdoutLines.filter((line) => /^Hunk #\d+ succeeded\b/.test(line)).length;
  const anyHunkLine = stdoutLines.some((line) => line.startsWith("Hunk #"));
  // A patch that reports nothing per hunk (not GNU, or not verbose) applied them all if it exited 0.
  const hunksApplied = result.exitCode === 0 && !anyHunkLine ? hunksInDiff : succeeded;
  const conflicts = [...stdoutLines, ...stderrLines].filter((line) => CONFLICT_LINE.test(line));
  if (result.exitCode !== 0 && conflicts.length === 0) {
    const said = [...stderrLines, ...stdoutLines].filter((line) => line !== "").slice(-5);
    conflicts.push(
      `patch exited with ${result.exitCode === null ? `signal ${result.signal ?? "?"}` : `code ${result.exitCode}`}` +
        (said.length > 0 ? `: ${said.join(" / ")}` : ""),
    );
  }
  return { hunksApplied, conflicts };
}
