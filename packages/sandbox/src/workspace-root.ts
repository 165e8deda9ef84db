import { lstatSync } from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { isInside } from "./paths.js";

/**
 * The workspace root of the race-free walk (`beneath.ts`) and what can be said of a path before
 * touching the disk: its components, folded lexically and confined to the root by name.
 */

/** The workspace root a walk starts from: its real path, and its identity to check on each walk. */
export interface WorkspaceRoot {
  /** Real path of the root. */
  real: string;
  /** The root as the caller spelled it (maybe through a symlink), for absolute paths written so. */
  given: string;
  device: number;
  inode: number;
}

/**
 * The most components a path may have, symlinks expanded: a PATH_MAX of 4,096 bytes holds at most
 * 2,048, and a deeper path is a flood, not a file a model means.
 */
export const MAX_PATH_COMPONENTS = 1_024;

/** Record the identity of the workspace root `real` (spelled `given` by the caller). */
export function workspaceRoot(given: string, real: string): WorkspaceRoot {
  const info = lstatSync(real);
  if (!info.isDirectory()) {
    throw new ToolError("NOT_A_DIRECTORY", `the workspace root is not a folder: ${given}`);
  }
  return { real, given, device: info.dev, inode: info.ino };
}

/**
 * `absolute` with the root as the caller spelled it (through a symlink, say) replaced by its real
 * path; unchanged when it is not under the spelled root.
 */
export function throughRealRoot(root: WorkspaceRoot, absolute: string): string {
  return !isInside(root.real, absolute) && isInside(root.given, absolute)
    ? path.join(root.real, path.relative(root.given, absolute))
    : absolute;
}

/**
 * The workspace-relative components of `requested`, lexically: `..` and `.` folded, absolute paths
 * inside the root (as its real path or as given) accepted. Refuses non-strings and NUL bytes with
 * `INVALID_PATH`, anything outside the root with `PATH_ESCAPE`.
 */
export function lexicalComponents(root: WorkspaceRoot, requested: unknown): string[] {
  if (typeof requested !== "string") {
    throw new ToolError("INVALID_PATH", `a path must be a string, got ${typeof requested}`);
  }
  if (requested.includes("\0")) {
    throw new ToolError("INVALID_PATH", `path contains a NUL byte: ${JSON.stringify(requested)}`);
  }
  let absolute: string;
  if (path.isAbsolute(requested)) {
    absolute = throughRealRoot(root, path.resolve(requested));
  } else {
    absolute = path.resolve(root.real, requested);
  }
  if (!isInside(root.real, absolute)) throw escapeError(requested, absolute);
  return capped(splitRelative(path.relative(root.real, absolute)), requested);
}

/** `components`, refused with `INVALID_PATH` past {@link MAX_PATH_COMPONENTS}. */
export function capped(components: string[], requested: string): string[] {
  if (components.length > MAX_PATH_COMPONENTS) {
    throw new ToolError(
      "INVALID_PATH",
      `path has more than ${MAX_PATH_COMPONENTS} parts (symlinks followed): ${requested.slice(0, 200)}`,
    );
  }
  return components;
}

/** The components of a workspace-relative path (none for the root itself). */
export function splitRelative(relative: string): string[] {
  return relative === "" ? [] : relative.split(path.sep);
}

/** The `PATH_ESCAPE` refusal of `requested`, which resolved to `resolved`. */
export function escapeError(requested: string, resolved: string): ToolError {
  return new ToolError("PATH_ESCAPE", `path escapes the workspace: ${requested}`, {
    details: { resolved },
  });
}
