import path from "node:path";
import { ToolError } from "@pleach/core";

/**
 * Whether `target` is `parent` itself or lies beneath it, by whole path segments. Both are
 * normalized absolute paths (as `realpath` and `path.resolve` give them), so comparing strings is
 * enough.
 */
export function isInside(parent: string, target: string): boolean {
  if (target === parent) return true;
  return target.startsWith(parent.endsWith(path.sep) ? parent : `${parent}${path.sep}`);
}

/**
 * Whether `target` or one of its ancestors is in `parents` ({@link isInside} one of them), by one
 * lookup per ancestor, whatever the number of parents. Same normalized absolute paths.
 */
export function isInsideAny(parents: ReadonlySet<string>, target: string): boolean {
  if (parents.size === 0) return false;
  for (let current = target; ; current = path.dirname(current)) {
    if (parents.has(current)) return true;
    if (current === path.dirname(current)) return false;
  }
}

/** Turn a file-system error into the matching {@link ToolError}, naming the path. */
export function fromErrno(error: unknown, requested: string): ToolError {
  const code = (error as NodeJS.ErrnoException)?.code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case "ENOENT":
      return new ToolError("NOT_FOUND", `no such file or folder: ${requested}`, { cause: error });
    case "ENOTDIR":
      return new ToolError("NOT_A_DIRECTORY", `a part of the path is not a folder: ${requested}`, {
        cause: error,
      });
    case "ENXIO": // a socket, or a device with nothing behind it
      return new ToolError("NOT_A_FILE", `not a regular file: ${requested}`, { cause: error });
    case "EISDIR":
      return new ToolError("NOT_A_FILE", `is a folder, not a file: ${requested}`, { cause: error });
    case "EACCES":
    case "EPERM":
      return new ToolError("PERMISSION_DENIED", `permission denied: ${requested}`, {
        cause: error,
      });
    case "EROFS":
      return new ToolError("READ_ONLY", `the file system is read-only: ${requested}`, {
        cause: error,
      });
    case "ELOOP":
      return new ToolError("INVALID_PATH", `too many levels of symlinks: ${requested}`, {
        cause: error,
      });
    case "ENAMETOOLONG":
      return new ToolError("INVALID_PATH", `path too long: ${requested}`, { cause: error });
    default:
      return new ToolError("INTERNAL", `${message} (${requested})`, { cause: error });
  }
}

/** Drop paths inside another listed folder (a mount over it covers them) and sort shallow first. */
export function outermostOnly<Entry extends { path: string }>(paths: readonly Entry[]): Entry[] {
  const sorted = paths
    .map((entry) => ({ entry, depth: entry.path.split(path.sep).length }))
    .sort(
      (left, right) =>
        left.depth - right.depth ||
        (left.entry.path < right.entry.path ? -1 : left.entry.path > right.entry.path ? 1 : 0),
    );
  const kept = new Set<string>();
  const outermost: Entry[] = [];
  for (const { entry } of sorted) {
    if (isInsideAny(kept, entry.path)) continue;
    kept.add(entry.path);
    outermost.push(entry);
  }
  return outermost;
}
