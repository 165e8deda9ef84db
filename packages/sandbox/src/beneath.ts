import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  type Stats,
} from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { fromErrno, isInside } from "./paths.js";
import {
  capped,
  escapeError,
  lexicalComponents,
  splitRelative,
  throughRealRoot,
  type WorkspaceRoot,
} from "./workspace-root.js";

export type { WorkspaceRoot } from "./workspace-root.js";
export { workspaceRoot } from "./workspace-root.js";

/**
 * Race-free access to a workspace's files from the host. A sandboxed command can swap any folder
 * of the workspace for a symlink at any moment, so a path checked by name and then opened by name
 * again can lead anywhere by the time it is used. Here a path is walked from the workspace root
 * one component at a time, each opened relative to the folder held open before it, never letting
 * the kernel follow a symlink: on Linux each step opens `/proc/self/fd/<held folder>/<name>` with
 * `O_NOFOLLOW`, which is `openat(held, name, O_NOFOLLOW)`. A symlink found on the way is read and
 * resolved here, lexically, and the walk starts again from the root on the resolved path, so a
 * link inside the workspace works and one that leads out is refused, whatever it is changed to
 * meanwhile. The operations that follow (open, create, rename) are made relative to the held
 * folder too, so what was checked is what is used.
 *
 * Elsewhere (macOS) there is no `/proc`: the same walk runs on full paths with `O_NOFOLLOW` on
 * each component, which refuses a symlink met at each step but leaves a window between a step
 * and the next (see docs/sandbox.md).
 */

/** A folder of the workspace passed on the way: its identity, judged by the protection policy. */
export interface WalkedFolder {
  /** Whether it is the workspace root. */
  isRoot: boolean;
  device: number;
  inode: number;
}

/** The deepest folder of a walk, held open. */
export interface HeldFolder extends WalkedFolder {
  fd: number;
  /** Its workspace-relative path (`""` for the root), as walked: no symlink in it. */
  relative: string;
}

/** Where a walk ended. */
export interface Located {
  /** The path as the caller wrote it. */
  requested: string;
  /** Every folder passed from the root down to `parent`, with its identity as opened. */
  folders: WalkedFolder[];
  /** The deepest existing folder on the path, held open until `close()`. */
  parent: HeldFolder;
  /**
   * The names below `parent` that do not exist yet, the final name last; empty when the target
   * itself exists (then it is `name` in `parent`, or `parent` itself when `name` is `""`).
   */
  missing: string[];
  /** The final name in `parent` when the target exists; `""` when the target is `parent`. */
  name: string;
  /** `lstat` of the existing target (never a symlink), when `name` is not `""`. */
  target: Stats | undefined;
  /** The resolved workspace-relative path of the target (no symlink in it). */
  relative: string;
  /** Close the held folder; safe to call twice. */
  close(): void;
}

/** Options of {@link locate}. */
export interface LocateOptions {
  /** Make the missing folders on the way (not the final name), each relative to its held parent. */
  create?: boolean;
  /**
   * Called before each folder is made, with its workspace-relative path and the folders passed to
   * reach it: throws to refuse (the protection policy, judged before anything is made).
   */
  beforeCreate?: (relative: string, folders: readonly WalkedFolder[]) => void;
}

const HAS_PROC_FD = process.platform === "linux";
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Links followed in one walk before it gives up, as the kernel's own limit. */
const MAX_LINKS = 40;
/** Walks started again because a component changed under the walk, before giving up. */
const MAX_RETRIES = 8;
/** The path that names `name` inside the held folder `folder`, for any path-taking system call. */
export function at(root: WorkspaceRoot, folder: HeldFolder, name: string): string {
  return HAS_PROC_FD
    ? `/proc/self/fd/${folder.fd}/${name}`
    : path.join(root.real, folder.relative, name);
}

/**
 * The real path of what is open as `fd` now: on Linux read from `/proc/self/fd`, so it is the very
 * file or folder held, wherever it was moved; elsewhere `walked`, its path as walked (no symlink).
 */
export function openedPath(fd: number, walked: string): string {
  return HAS_PROC_FD ? readlinkSync(`/proc/self/fd/${fd}`) : walked;
}

/**
 * Walk `requested` from the root, holding one folder open at a time (each opened relative to the
 * one before), following symlinks only by resolving them here within the workspace. With
 * `create`, missing folders on the way (not the final name) are made, each relative to its held
 * parent, after `beforeCreate` allowed it. The caller must `close()` the result.
 */
export function locate(
  root: WorkspaceRoot,
  requested: unknown,
  { create = false, beforeCreate }: LocateOptions = {},
): Located {
  const original = typeof requested === "string" ? requested : String(requested);
  let components = lexicalComponents(root, requested);
  let links = 0;
  let retries = 0;
  // Components up to this index came from a symlink's target and must exist (a dangling link
  // cannot be written through: where it leads is decided by whoever makes its target).
  let mustExistThrough = -1;
  for (;;) {
    const walk: Walk = { held: openRoot(root, original), folders: [] };
    walk.folders.push(walk.held);
    try {
      const outcome = walkFrom(root, walk, components, {
        create,
        beforeCreate,
        mustExistThrough,
        requested: original,
      });
      if (outcome.kind === "located") {
        const parent = walk.held;
        let closed = false;
        return {
          ...outcome.located,
          requested: original,
          folders: walk.folders,
          parent,
          close() {
            if (closed) return;
            closed = true;
            closeSync(parent.fd);
          },
        };
      }
      closeHeld(walk);
      if (outcome.kind === "link") {
        links += 1;
        if (links > MAX_LINKS) {
          throw new ToolError("INVALID_PATH", `too many levels of symlinks: ${original}`);
        }
        components = capped(outcome.components, original);
        mustExistThrough = outcome.mustExistThrough;
      } else {
        retries += 1;
        if (retries > MAX_RETRIES) {
          throw new ToolError(
            "CONFLICT",
            `the path kept changing while it was opened: ${original}; try again once nothing else changes it`,
          );
        }
      }
    } catch (error) {
      closeHeld(walk);
      throw error instanceof ToolError ? error : fromErrno(error, original);
    }
  }
}

/** A walk in progress: the folder held open now, and every folder passed. */
interface Walk {
  held: HeldFolder;
  folders: WalkedFolder[];
  /** Whether `held` was closed (its number may belong to another file by now). */
  closed?: boolean;
}

function closeHeld(walk: Walk): void {
  if (walk.closed) return;
  walk.closed = true;
  closeSync(walk.held.fd);
}

type WalkOutcome =
  | {
      kind: "located";
      located: Pick<Located, "missing" | "name" | "target" | "relative">;
    }
  | { kind: "link"; components: string[]; mustExistThrough: number }
  | { kind: "retry" };

function walkFrom(
  root: WorkspaceRoot,
  walk: Walk,
  components: readonly string[],
  {
    create,
    beforeCreate,
    mustExistThrough,
    requested,
  }: {
    create: boolean;
    beforeCreate: LocateOptions["beforeCreate"];
    mustExistThrough: number;
    requested: string;
  },
): WalkOutcome {
  const relativeThrough = (index: number) => components.slice(0, index + 1).join(path.sep);
  let made = 0;
  for (let index = 0; index < components.length; index += 1) {
    const name = components[index] as string;
    const last = index === components.length - 1;
    const entry = at(root, walk.held, name);
    const info = lstatSync(entry, { throwIfNoEntry: false });
    if (info === undefined) {
      if (index <= mustExistThrough) {
        throw new ToolError(
          "PATH_ESCAPE",
          `path goes through a symlink whose target does not exist: ${requested}`,
          { details: { resolved: path.join(root.real, relativeThrough(index)) } },
        );
      }
      if (!create || last) {
        return {
          kind: "located",
          located: {
            missing: components.slice(index),
            name: "",
            target: undefined,
            relative: components.join(path.sep),
          },
        };
      }
      made += 1;
      if (made > components.length + MAX_RETRIES) return { kind: "retry" };
      // Judged where it is made, in the folder held now: a swap since any earlier check cannot
      // send it elsewhere.
      beforeCreate?.(relativeThrough(index), walk.folders);
      try {
        // mkdir never follows a symlink at its final name: one made meanwhile gives EEXIST.
        mkdirSync(entry, { mode: 0o777 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      index -= 1; // open what is there now
      continue;
    }
    if (info.isSymbolicLink()) return followLink(root, entry, components, index, requested);
    if (last) {
      return {
        kind: "located",
        located: { missing: [], name, target: info, relative: components.join(path.sep) },
      };
    }
    if (!info.isDirectory()) {
      throw new ToolError("NOT_A_DIRECTORY", `a part of the path is not a folder: ${requested}`);
    }
    let fd: number;
    try {
      fd = openSync(entry, DIRECTORY_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Swapped for a link or a file, or removed, since the lstat: look again.
      if (code === "ELOOP" || code === "ENOTDIR" || code === "ENOENT") return { kind: "retry" };
      throw error;
    }
    let opened: Stats;
    try {
      opened = fstatSync(fd);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    // Only the deepest folder stays open: a deep path costs one descriptor, not one per part.
    closeSync(walk.held.fd);
    walk.held = {
      fd,
      isRoot: false,
      relative: HAS_PROC_FD ? "" : relativeThrough(index),
      device: opened.dev,
      inode: opened.ino,
    };
    walk.folders.push({ isRoot: false, device: opened.dev, inode: opened.ino });
  }
  return {
    kind: "located",
    located: { missing: [], name: "", target: undefined, relative: components.join(path.sep) },
  };
}

/** The components of the path after resolving the symlink at `components[index]`. */
function followLink(
  root: WorkspaceRoot,
  entry: string,
  components: readonly string[],
  index: number,
  requested: string,
): WalkOutcome {
  let target: string;
  try {
    target = readlinkSync(entry);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EINVAL" || code === "ENOENT") return { kind: "retry" };
    throw error;
  }
  const folder = path.join(root.real, ...components.slice(0, index));
  const resolved = path.resolve(folder, target);
  const inRoot = throughRealRoot(root, resolved);
  if (!isInside(root.real, inRoot)) {
    throw escapeError(requested, path.join(inRoot, ...components.slice(index + 1)));
  }
  const base = splitRelative(path.relative(root.real, inRoot));
  return {
    kind: "link",
    components: [...base, ...components.slice(index + 1)],
    mustExistThrough: base.length - 1,
  };
}

/** Open the root by its real path and check it is still the folder the client was made for. */
function openRoot(root: WorkspaceRoot, requested: string): HeldFolder {
  let fd: number;
  try {
    fd = openSync(root.real, DIRECTORY_FLAGS);
  } catch (error) {
    throw fromErrno(error, requested);
  }
  const info = fstatSync(fd);
  if (info.dev !== root.device || info.ino !== root.inode) {
    closeSync(fd);
    throw new ToolError(
      "NOT_FOUND",
      `the workspace folder ${root.given} was replaced since this sandbox was made; make a new one`,
    );
  }
  return { fd, isRoot: true, relative: "", device: info.dev, inode: info.ino };
}
