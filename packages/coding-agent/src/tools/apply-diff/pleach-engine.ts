import path_ from "node:path";
import { isToolError, ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { type ApplyFilePatchResult, applyFilePatch } from "../diff/apply.js";
import { type FilePatch, parseUnifiedDiff } from "../diff/parse.js";
import { isV4APatch, parseV4APatch, type V4AFile } from "../diff/v4a.js";
import { applyV4AChunks } from "../diff/v4a-apply.js";
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

/** One file the patch changes. */
interface FileTarget {
  /** Where the new text goes. */
  path: string;
  /** The file read, and removed when it is not `path` (a V4A move). */
  source: string;
  /** `modify` needs the file; `create` and `delete` take a missing one as their business. */
  operation: FilePatch["operation"];
  /** The new text and the report of each hunk, from the file's current text. */
  apply(original: string | undefined, label: string | undefined): ApplyFilePatchResult;
}

function unifiedTarget(path: string, patch: FilePatch): FileTarget {
  return {
    path,
    source: path,
    operation: patch.operation,
    apply: (original, label) =>
      applyFilePatch(original, patch, label === undefined ? {} : { label }),
  };
}

/** A V4A section as a target: an added file replaces what is there, as in OpenAI's apply_patch. */
function v4aTarget(file: V4AFile): FileTarget {
  const path = path_.posix.normalize(file.path);
  if (file.kind === "add") {
    return {
      path,
      source: path,
      operation: "create",
      apply: () => ({
        text: file.text,
        hunks: [{ hunk: 1, status: "applied", line: 1 }],
        conflicts: [],
      }),
    };
  }
  if (file.kind === "delete") {
    return {
      path,
      source: path,
      operation: "modify",
      apply: () => ({
        text: null,
        hunks: [{ hunk: 1, status: "applied", line: 1 }],
        conflicts: [],
      }),
    };
  }
  return {
    path: path_.posix.normalize(file.moveTo ?? file.path),
    source: path,
    operation: "modify",
    apply: (original, label) =>
      applyV4AChunks(original ?? "", file.chunks, label === undefined ? {} : { label }),
  };
}

/** Which files a V4A patch changes; `path` is "." or the one file it names. */
function resolveV4ATargets(files: readonly V4AFile[], requestedPath: string): FileTarget[] {
  const targets = files.map(v4aTarget);
  const requested = path_.posix.normalize(requestedPath);
  const named = targets.flatMap((target) => [target.source, target.path]);
  if (requested !== "." && !(targets.length === 1 && named.includes(requested))) {
    throw new ToolError(
      "INVALID_INPUT",
      `a V4A patch (\`*** Begin Patch\`) names its files itself (${[...new Set(named)].join(", ")}): pass path "." to apply it to them.`,
    );
  }
  checkDistinct(targets);
  return targets;
}

function checkDistinct(targets: readonly FileTarget[]): void {
  const seen = new Set<string>();
  for (const target of targets) {
    for (const name of new Set([target.source, target.path])) {
      if (seen.has(name)) {
        throw new ToolError(
          "INVALID_INPUT",
          `the diff has two sections for ${name}; merge their hunks into one section.`,
        );
      }
      seen.add(name);
    }
  }
}

/** Which workspace file each file section of a unified diff changes (see `path`'s description). */
function resolveUnifiedTargets(diff: string, requestedPath: string): FileTarget[] {
  const patches = parseUnifiedDiff(diff);
  if (patches.length === 0) throw new ToolError("INVALID_INPUT", NO_HUNKS_MESSAGE);
  const named = (patch: FilePatch) => patch.newPath ?? patch.oldPath;
  const requested = path_.posix.normalize(requestedPath);
  if (patches.length === 1 && requested !== "." && requested !== "./") {
    return patches.map((patch) => unifiedTarget(requested, patch));
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
    return unifiedTarget(path_.posix.normalize(name), patch);
  });
  checkDistinct(targets);
  return targets;
}

/**
 * `apply_diff`'s default engine, in-process over the client's `readFile`/`writeFile`: every file of
 * the diff is read and every hunk placed before anything is written (see {@link applyFilePatch}),
 * then the files are written and only then the deleted ones removed (see {@link writeChanges}).
 * Unless `partial`, nothing is written when a hunk conflicts.
 */
export async function applyWithEngine(
  client: SandboxClient,
  { requestedPath, diff, partial, rejectSyntaxErrors, timeoutMs, abortSignal }: EngineRequest,
): Promise<ApplyDiffOutput> {
  const targets = isV4APatch(diff)
    ? resolveV4ATargets(parseV4APatch(diff), requestedPath)
    : resolveUnifiedTargets(diff, requestedPath);
  const several = targets.length > 1;
  const results = [];
  for (const target of targets) {
    const original = await readOriginal(client, target);
    const result = target.apply(original, several ? target.path : undefined);
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
  const moved = (target: FileTarget) => target.source !== target.path;
  const changes = results.filter(
    ({ target, result, original }) => moved(target) || result.text !== (original ?? null),
  );
  // A move onto a file that exists replaces it; whether it did is reported.
  const replaced = new Set<FileTarget>();
  for (const { target } of changes) {
    if (moved(target) && (await exists(client, target.path))) replaced.add(target);
  }
  // Checked before anything is written, so that a refusal leaves every file as it was.
  const syntax = write
    ? await syntaxCheckBeforeWrite(
        { toolName: "apply_diff", what: "diff", reject: rejectSyntaxErrors },
        changes.map(({ target, original, result }) => ({
          path: target.path,
          before: moved(target) ? "" : (original ?? ""),
          after: result.text,
        })),
      )
    : {};
  if (write) await writeChanges(client, changes, { timeoutMs, abortSignal });
  for (const { target, original, result } of results) {
    const changed = write && changes.some((change) => change.target === target);
    if (changed && moved(target)) {
      files.push({ path: target.source, action: "deleted" });
      files.push({ path: target.path, action: replaced.has(target) ? "modified" : "created" });
      continue;
    }
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

/** A file of the diff that changes: what it was, and what the diff makes of it. */
interface Change {
  target: FileTarget;
  original: string | undefined;
  result: { text: string | null };
}

/**
 * Write what the diff changes, then remove what it deletes (a moved file's old path too), so
 * that a failure midway never loses a file: what a write refuses leaves every deleted file in
 * place. Before anything changes, each written path is judged by the client's protection policy
 * where it has one (the local sandbox's), and a client that must delete is asked to run a command
 * (deleting is `rm -f` through `exec`), so that the usual refusals come before the first write.
 * A failure after that says which files were already written.
 */
async function writeChanges(
  client: SandboxClient,
  changes: readonly Change[],
  { timeoutMs, abortSignal }: { timeoutMs?: number; abortSignal?: AbortSignal },
): Promise<void> {
  const moved = (target: FileTarget) => target.source !== target.path;
  const writes = changes.filter(({ result }) => result.text !== null);
  const deletes = changes.filter(
    ({ target, original, result }) =>
      (result.text === null || moved(target)) && original !== undefined,
  );
  const protection = (client as { protection?: () => Promise<WorkspaceProtectionLike> }).protection;
  if (typeof protection === "function" && writes.length > 0) {
    const policy = await protection.call(client);
    for (const { target } of writes) {
      const rule = policy.ruleFor(path_.posix.normalize(target.path));
      if (rule !== undefined) {
        throw new ToolError("PROTECTED_PATH", `${target.path}: ${rule}; nothing was changed`, {
          details: { path: target.path },
        });
      }
    }
  }
  if (deletes.length > 0) {
    const probe = await client.exec("true", { timeoutMs, abortSignal });
    if (probe.exitCode !== 0) {
      throw new ToolError(
        "COMMAND_FAILED",
        `the diff deletes ${deletes.map(({ target }) => target.source).join(", ")}, which needs a command, and the sandbox runs none (${probe.stderr.trim() || `exit ${probe.exitCode}`}); nothing was changed`,
      );
    }
  }
  const written: string[] = [];
  const failed = (error: unknown, what: string): never => {
    const done =
      written.length === 0
        ? "nothing was changed"
        : `already written: ${written.join(", ")}; no file was deleted`;
    if (error instanceof ToolError) {
      throw new ToolError(error.code, `${error.message} (${what}; ${done})`, {
        ...(error.details === undefined ? {} : { details: error.details }),
      });
    }
    throw new ToolError("INTERNAL", `${what} failed: ${String(error)} (${done})`);
  };
  for (const { target, result } of writes) {
    try {
      await client.writeFile(target.path, result.text as string);
    } catch (error) {
      failed(error, `writing ${target.path}`);
    }
    written.push(target.path);
  }
  for (const { target } of deletes) {
    const removed = await client.exec(`rm -f -- ${shellQuote(target.source)}`, {
      timeoutMs,
      abortSignal,
    });
    if (removed.exitCode !== 0) {
      throw new ToolError(
        "COMMAND_FAILED",
        `could not delete ${target.source}: ${removed.stderr.trim() || `rm exited with ${removed.exitCode}`} (already written: ${written.join(", ") || "none"}; delete it yourself, or write it back)`,
      );
    }
  }
}

/** What `writeChanges` asks of a client's protection policy (the local sandbox's). */
interface WorkspaceProtectionLike {
  ruleFor(relative: string): string | undefined;
}

/** The file's current text; `undefined` when a diff that creates or deletes it finds it missing. */
async function readOriginal(
  client: SandboxClient,
  target: FileTarget,
): Promise<string | undefined> {
  try {
    return await readTextFile(client, target.source, {
      toolName: "apply_diff",
      missingHint:
        "apply_diff changes existing files unless the diff creates one (`--- /dev/null`): check the path (list_files helps), or create the file with write_file.",
    });
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_FOUND" && target.operation !== "modify") {
      return undefined;
    }
    throw error;
  }
}

/** Whether the client can read a file at `filePath`. */
async function exists(client: SandboxClient, filePath: string): Promise<boolean> {
  try {
    await client.readFile(filePath, { encoding: "base64" });
    return true;
  } catch {
    return false;
  }
}
