import path from "node:path";
import { ToolError } from "@pleach/core";

/** Options of {@link workspaceRelativePath}. */
export interface WorkspaceRelativePathOptions {
  /** The input field the path came from, named in error messages (`dir`, `dest`, ...). */
  field: string;
  /**
   * A workspace-relative folder the path is relative to (git pathspecs are relative to the
   * command's folder); the escape check applies to the joined path.
   * @default ""
   */
  base?: string;
}

/**
 * Normalize a path a model gave as relative to the workspace root: `""` for the root itself
 * (`"."`, `"./"`, `""`), otherwise a clean relative path without `./`, duplicate or trailing
 * slashes. Absolute paths, NUL bytes and paths whose `..` segments leave the workspace are refused.
 * The check is lexical only; the sandbox client still confines the folder by realpath when the
 * path is passed as an exec `cwd`.
 */
export function workspaceRelativePath(
  value: string,
  { field, base = "" }: WorkspaceRelativePathOptions,
): string {
  if (value.includes("\0")) {
    throw new ToolError(
      "INVALID_PATH",
      `${field} contains a NUL byte: ${JSON.stringify(value)}. Give a plain path.`,
    );
  }
  if (path.posix.isAbsolute(value)) {
    throw new ToolError(
      "INVALID_PATH",
      `${field} must be relative to the workspace root (like "src" or "."), got the absolute path ${JSON.stringify(value)}.`,
    );
  }
  const normalized = path.posix.normalize(path.posix.join(base, value === "" ? "." : value));
  if (normalized === ".." || normalized.startsWith("../")) {
    throw new ToolError(
      "PATH_ESCAPE",
      `${field} ${JSON.stringify(value)} leads out of the workspace (it resolves to ${JSON.stringify(normalized)}). Use a path inside the workspace.`,
    );
  }
  if (normalized === "." || normalized === "./") return "";
  return normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

/** Whether a normalized workspace-relative path names a `.git` folder or something inside one. */
export function isInsideGitDir(relative: string): boolean {
  return relative.split("/").includes(".git");
}

/**
 * Shell text that stops a command (exit {@link GIT_DIR_GUARD_STATUS}) when its working folder
 * really is inside a `.git` folder, for instance reached through a symlink the lexical check of
 * {@link isInsideGitDir} cannot see. `cd -P .` makes `$PWD` the physical path without the fork
 * that `$(pwd -P)` costs (about half a millisecond a call).
 */
export const GIT_DIR_GUARD =
  'cd -P . 2>/dev/null; case "$PWD/" in */.git/*) echo "refusing to look inside a .git folder" >&2; exit 97;; esac; ';

/** The exit status of {@link GIT_DIR_GUARD} when it refuses. */
export const GIT_DIR_GUARD_STATUS = 97;
