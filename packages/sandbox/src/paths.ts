import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";

/** A workspace path after confinement. */
export interface ConfinedPath {
  /** The path as the caller wrote it. */
  requested: string;
  /** The real path it designates: symlinks resolved for the part that exists. */
  real: string;
  /** Its path relative to the workspace root's real path (`""` for the root itself). */
  relative: string;
  /** Whether something exists there. */
  exists: boolean;
}

/** Whether `candidate` is `root` or lies below it, by whole path segments. */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === "" ||
    (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

/**
 * Confine `requested` to the workspace whose root is `rootReal` (a real path), also accepting
 * absolute paths written against `rootGiven` (the root as the user spelled it, maybe through a
 * symlink). The target's real path, or its nearest existing ancestor's for a path that does not
 * exist yet, must lie inside the root: `..`, absolute paths elsewhere and symlinks that lead out are
 * refused with `PATH_ESCAPE`; NUL bytes and non-strings with `INVALID_PATH`.
 */
export async function confinePath(
  rootReal: string,
  rootGiven: string,
  requested: unknown,
): Promise<ConfinedPath> {
  return confinePathSync(rootReal, rootGiven, requested);
}

/**
 * {@link confinePath} without the promise. The file system is asked synchronously: a realpath of a
 * local path takes microseconds, while a trip through libuv's thread pool costs tens to hundreds of
 * them on a busy machine, more than the call it carries. Throws what {@link confinePath} rejects
 * with.
 */
export function confinePathSync(
  rootReal: string,
  rootGiven: string,
  requested: unknown,
): ConfinedPath {
  if (typeof requested !== "string") {
    throw new ToolError("INVALID_PATH", `a path must be a string, got ${typeof requested}`);
  }
  if (requested.includes("\0")) {
    throw new ToolError("INVALID_PATH", `path contains a NUL byte: ${JSON.stringify(requested)}`);
  }
  let lexical: string;
  if (path.isAbsolute(requested)) {
    const normalized = path.resolve(requested);
    // An absolute path spelled with the root as given (e.g. /tmp/x where /tmp is a link) counts too.
    lexical =
      !isInside(rootReal, normalized) && isInside(rootGiven, normalized)
        ? path.join(rootReal, path.relative(rootGiven, normalized))
        : normalized;
  } else {
    lexical = path.resolve(rootReal, requested);
  }
  if (!isInside(rootReal, lexical)) throw escapeError(requested, lexical);

  // Resolve symlinks on the longest prefix that exists; what follows it does not exist yet.
  let existing = lexical;
  const missing: string[] = [];
  for (;;) {
    let real: string;
    try {
      real = realpathSync.native(existing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw fromErrno(error, requested);
      if (isSymlink(existing)) {
        // A dangling link: where it would lead is unknowable, so writing through it is refused.
        throw new ToolError(
          "PATH_ESCAPE",
          `path goes through a symlink whose target does not exist: ${requested}`,
          { details: { resolved: existing } },
        );
      }
      const parent = path.dirname(existing);
      if (parent === existing) throw fromErrno(error, requested);
      missing.push(path.basename(existing));
      existing = parent;
      continue;
    }
    const full = missing.length === 0 ? real : path.join(real, ...missing.reverse());
    if (!isInside(rootReal, full)) throw escapeError(requested, full);
    return {
      requested,
      real: full,
      relative: path.relative(rootReal, full),
      exists: missing.length === 0,
    };
  }
}

function isSymlink(candidate: string): boolean {
  try {
    return lstatSync(candidate).isSymbolicLink();
  } catch {
    return false;
  }
}

function escapeError(requested: string, resolved: string): ToolError {
  return new ToolError("PATH_ESCAPE", `path escapes the workspace: ${requested}`, {
    details: { resolved },
  });
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
