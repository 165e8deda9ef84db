import path from "node:path";
import { ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";

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

/** Options of {@link resolveWorkspacePath}. */
export interface ResolveWorkspacePathOptions extends WorkspaceRelativePathOptions {
  /** Whether the path must name a folder (an exec `cwd`) or may name a file (a git pathspec). */
  kind: "folder" | "file";
  abortSignal?: AbortSignal;
}

/**
 * {@link workspaceRelativePath}, that also takes an absolute path inside the workspace, as the
 * sandbox client does for `read_file`, `write_file` and `run_tests`: the one rule for absolute
 * paths. A relative path is normalized as there (against `base`), with no command run. An absolute
 * one is made workspace-relative against the root's real path as the sandbox's commands see it
 * (`pwd -P` in the root); one that is not below it lexically (written through a symlink, say) is
 * handed to the client as a `cwd` (its folder, for a file), which converts a path inside the
 * workspace and refuses any other with `PATH_ESCAPE`. The result is still lexical: the client
 * confines it by realpath again when the tool passes it on.
 */
export async function resolveWorkspacePath(
  client: SandboxClient,
  value: string,
  { kind, abortSignal, ...options }: ResolveWorkspacePathOptions,
): Promise<string> {
  if (value.includes("\0") || !path.posix.isAbsolute(value)) {
    return workspaceRelativePath(value, options);
  }
  const root = await physicalFolder(client, "", abortSignal);
  const normalized = path.posix.normalize(value);
  let relative = path.posix.relative(root, normalized);
  if (relative === ".." || relative.startsWith("../") || path.posix.isAbsolute(relative)) {
    const folder = kind === "folder" ? value : path.posix.dirname(normalized);
    const physical = await physicalFolder(client, folder, abortSignal);
    relative = path.posix.relative(
      root,
      kind === "folder" ? physical : path.posix.join(physical, path.posix.basename(normalized)),
    );
  }
  if (relative === ".." || relative.startsWith("../") || path.posix.isAbsolute(relative)) {
    throw new ToolError(
      "PATH_ESCAPE",
      `${options.field} ${JSON.stringify(value)} is outside the workspace (${root}). Use a path inside it, or one relative to it.`,
    );
  }
  return workspaceRelativePath(relative, { field: options.field });
}

/** The real path of the workspace folder `cwd` as the sandbox's commands see it. */
async function physicalFolder(
  client: SandboxClient,
  cwd: string,
  abortSignal: AbortSignal | undefined,
): Promise<string> {
  const result = await client.exec("pwd -P", { cwd, timeoutMs: 30_000, abortSignal });
  const printed = result.stdout.trim();
  if (result.exitCode !== 0 || !path.posix.isAbsolute(printed)) {
    throw new ToolError(
      "COMMAND_FAILED",
      `could not learn where the workspace folder ${JSON.stringify(cwd || ".")} is (pwd -P exited ${result.exitCode}): ${result.stderr.trim() || "no message"}`,
    );
  }
  return printed;
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
