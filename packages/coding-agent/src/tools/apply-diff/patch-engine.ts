import path from "node:path";
import { isToolError, ToolError } from "@pleach/core";
import type { ExecResult, SandboxClient } from "../../sandbox/index.js";
import { tooLargeToChange } from "../shared/read-text-file.js";
import { shellQuote } from "../shared/shell-quote.js";
import { NO_HUNKS_MESSAGE } from "./pleach-engine.js";
import type { ApplyDiffOutput } from "./schema.js";

/** The workspace file the diff is written to before `patch` reads it (the specification's wire protocol). */
export const APPLY_DIFF_PATCH_FILE = ".pleach-apply-diff.patch";

const HUNK_HEADER = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/** What {@link applyWithPatch} is asked to do. */
interface PatchRequest {
  requestedPath: string;
  diff: string;
  timeoutMs: number;
  abortSignal: AbortSignal | undefined;
}

/**
 * `apply_diff`'s `engine: "patch"`, the specification's wire protocol: the diff is written to
 * `.pleach-apply-diff.patch` in the workspace and `patch -p0 -- <path> < .pleach-apply-diff.patch`
 * runs. Flags beyond `-p0`, all GNU patch: `--forward` so an already-applied diff is skipped and
 * reported rather than silently reversed, `--batch` so it never asks, `--verbose` so every applied
 * hunk prints a `Hunk #N succeeded` line (without it, hunks that apply exactly print nothing),
 * `--no-backup-if-mismatch` so no `.orig` file is left beside the target, and `--reject-file=-` so
 * no `.rej` file is either: the failed hunks are the ones named in `conflicts`. The patch file is
 * removed afterwards whatever happened.
 */
export async function applyWithPatch(
  client: SandboxClient,
  { requestedPath, diff, timeoutMs, abortSignal }: PatchRequest,
): Promise<ApplyDiffOutput> {
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
    if (isToolError(error) && error.code === "TOO_LARGE")
      throw tooLargeToChange("apply_diff", error);
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
