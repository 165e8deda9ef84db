import path from "node:path";
import { isToolError, ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { applyFilePatch } from "../diff/apply.js";
import { type FilePatch, parseUnifiedDiff } from "../diff/parse.js";
import { readTextFile } from "../shared/read-text-file.js";
import { shellQuote } from "../shared/shell-quote.js";
import { syntaxCheckBeforeWrite } from "../syntax/syntax-check.js";
import type { ApplyDiffHunkReport, ApplyDiffOutput } from "./schema.js";

/** The refusal of a diff without hunks, by either engine of `apply_diff`. */
export const NO_HUNKS_MESSAGE =
  "the diff has no hunks. apply_diff needs a unified diff: an optional `--- a/file` and " +
  "`+++ b/file` pair, then hunks that start with a line like `@@ -12,4 +12,5 @@` followed by " +
  "lines starting with a space (unchanged), `-` (removed) or `+` (added).";

/** What {@link applyWithEngine} is asked to do. */
interface EngineRequest {
  requestedPath: string;
  diff: string;
  partial: boolean;
  rejectSyntaxErrors: boolean;
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

/**
 * `apply_diff`'s default engine, in-process over the client's `readFile`/`writeFile`: every file of
 * the diff is read and every hunk placed before anything is written (see {@link applyFilePatch}),
 * and a deleted file is removed with `rm -f` through `exec`, before the writes, so a refusal there
 * leaves everything as it was. Unless `partial`, nothing is written when a hunk conflicts.
 */
export async function applyWithEngine(
  client: SandboxClient,
  { requestedPath, diff, partial, rejectSyntaxErrors, timeoutMs, abortSignal }: EngineRequest,
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
  // Checked before anything is written, so that a refusal leaves every file as it was.
  const syntax = write
    ? await syntaxCheckBeforeWrite(
        { toolName: "apply_diff", what: "diff", reject: rejectSyntaxErrors },
        changes.map(({ target, original, result }) => ({
          path: target.path,
          before: original ?? "",
          after: result.text,
        })),
      )
    : {};
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
    ...syntax,
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
