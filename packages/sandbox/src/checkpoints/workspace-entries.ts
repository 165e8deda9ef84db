import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  openSync,
  readlinkSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
} from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { at, locate, openedPath, type WorkspaceRoot } from "../beneath.js";
import { isInside } from "../paths.js";

/**
 * A checkpoint's reads and a restore's changes of single workspace entries, each made from a
 * folder held open as walked from the root (`locate`) and without following a link at the entry
 * itself: a link a running command swaps in is read or removed as a link, never followed out.
 */

/** What is known of a file from the last checkpoint: its identity then, and its blob. */
export type Known = Map<string, { key: string; sha: string }>;

/** The most bytes of one file a checkpoint keeps. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

export type Entry =
  | { kind: "known"; mode: string; sha: string }
  | { kind: "read"; mode: string; bytes: Buffer; key: string | undefined }
  | { kind: "skip"; reason: string }
  | { kind: "changed" }
  /** A changed file held open for its bytes to be read as they are taken: close `fd` then. */
  | { kind: "open"; mode: string; fd: number; size: number; key: string };

/**
 * One listed path as it is now, read without following a link: a link's target, a file's bytes
 * (or its blob from the last checkpoint when nothing about it changed), or why it is left out;
 * `undefined` when it is gone or is no file.
 */
export function readEntries(
  root: WorkspaceRoot,
  folder: string,
  relatives: readonly string[],
  hiddenPaths: readonly string[],
  known: Known,
): Array<[string, Entry | undefined]> | undefined {
  return inFolder(root, folder, (inside) =>
    relatives.map((relative) => [
      relative,
      readEntry(inside, relative, root, hiddenPaths, known, false),
    ]),
  );
}

/** One path as {@link readEntries} finds it, a file held open (never an unchanged blob). */
export function openEntry(
  root: WorkspaceRoot,
  relative: string,
  hiddenPaths: readonly string[],
): Entry | undefined {
  return inFolder(root, path.dirname(relative), (inside) =>
    readEntry(inside, relative, root, hiddenPaths, new Map(), true),
  );
}

/**
 * {@link readEntries} of one path, its folder held as `inside` names its entries; a changed file's
 * bytes only with `content` (else `changed`: read it with {@link readWholeEntry} when it is taken).
 */
function readEntry(
  inside: (name: string) => string,
  relative: string,
  root: WorkspaceRoot,
  hiddenPaths: readonly string[],
  known: Known,
  content: boolean,
): Entry | undefined {
  {
    const name = inside(path.basename(relative));
    let fd: number;
    try {
      fd = openSync(name, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ELOOP")
        return {
          kind: "read",
          mode: "120000",
          bytes: Buffer.from(readlinkSync(name)),
          key: undefined,
        };
      if (code === "ENOENT" || code === "ENOTDIR") return undefined;
      return { kind: "skip", reason: `it cannot be read: ${code}` };
    }
    try {
      const stat = fstatSync(fd, { bigint: true });
      if (!stat.isFile()) return undefined;
      const real = openedPath(fd, path.join(root.real, relative));
      if (hiddenPaths.some((hiddenPath) => isInside(hiddenPath, real))) {
        return { kind: "skip", reason: "hidden by the read policy" };
      }
      if (stat.size > BigInt(MAX_FILE_BYTES)) {
        return {
          kind: "skip",
          reason: `over the ${MAX_FILE_BYTES / 1024 / 1024} MiB a checkpoint keeps of a file`,
        };
      }
      const mode = (stat.mode & 0o111n) !== 0n ? "100755" : "100644";
      const key = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${mode}`;
      const before = known.get(relative);
      if (before?.key === key && before.sha !== "") return { kind: "known", mode, sha: before.sha };
      if (!content) return { kind: "changed" };
      const open: Entry = { kind: "open", mode, fd, size: Number(stat.size), key };
      fd = -1;
      return open;
    } finally {
      if (fd !== -1) closeSync(fd);
    }
  }
}

/** Remove the file or link at `relative` (never a folder, never through a link); whether done. */
export function unlinkEntry(root: WorkspaceRoot, relative: string): boolean {
  try {
    return (
      inFolder(root, path.dirname(relative), (inside) => {
        unlinkSync(inside(path.basename(relative)));
        return true;
      }) ?? false
    );
  } catch {
    return false;
  }
}

/**
 * Call `use` with the names inside the workspace folder `folder` (`.` for the root), the folder
 * held open as walked from the root (`locate`) and opened itself without following a link;
 * `undefined` when it is not there, is no longer a folder, or is reached through a link.
 */
function inFolder<Result>(
  root: WorkspaceRoot,
  folder: string,
  use: (inside: (name: string) => string) => Result,
): Result | undefined {
  const located = locate(root, folder);
  try {
    // A link on the way (a folder swapped for one, even to a place inside the workspace such as
    // .git) would make the names inside another folder's: only the folder itself is taken.
    if (located.missing.length > 0 || located.relative !== (folder === "." ? "" : folder)) {
      return undefined;
    }
    if (located.name === "") return use((name) => at(root, located.parent, name));
    let fd: number;
    try {
      fd = openSync(
        at(root, located.parent, located.name),
        constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
      );
    } catch {
      return undefined;
    }
    try {
      const { dev, ino } = fstatSync(fd);
      const held = { fd, relative: folder, isRoot: false, device: dev, inode: ino };
      return use((name) => at(root, held, name));
    } finally {
      closeSync(fd);
    }
  } finally {
    located.close();
  }
}

/** Remove the folders that held only removed files and were not in the checkpoint. */
export function removeEmptiedFolders(
  root: WorkspaceRoot,
  removed: readonly string[],
  wanted: ReadonlyMap<string, unknown>,
  refused: (relative: string) => boolean,
) {
  const kept = new Set<string>();
  for (const relative of wanted.keys()) {
    for (let folder = path.dirname(relative); folder !== "."; folder = path.dirname(folder)) {
      kept.add(folder);
    }
  }
  const folders = new Set<string>();
  for (const relative of removed) {
    for (let folder = path.dirname(relative); folder !== "."; folder = path.dirname(folder)) {
      if (!kept.has(folder)) folders.add(folder);
    }
  }
  // Deepest first: a folder empties once its own folders are gone.
  for (const folder of [...folders].sort((a, b) => b.length - a.length)) {
    if (refused(folder)) continue;
    try {
      inFolder(root, path.dirname(folder), (inside) => rmdirSync(inside(path.basename(folder))));
    } catch {
      // Not empty (something the checkpoint does not hold, an ignored file): it stays.
    }
  }
}

/** Make the link `relative` to `target`, its missing folders made, with no link on the way. */
export function makeLink(root: WorkspaceRoot, relative: string, target: string) {
  const throughLink = () =>
    new ToolError(
      "CONFLICT",
      `a folder on the way to ${relative} is a link now; it was left as it is`,
    );
  // As everything a restore touches, reached through no link, even one inside the workspace (a
  // folder swapped for a link to .git would put the link in the repository's machinery).
  const located = locate(root, relative, {
    create: true,
    beforeCreate: (folder) => {
      if (!`${relative}/`.startsWith(`${folder}/`)) throw throughLink();
    },
  });
  try {
    if (located.relative !== path.posix.normalize(relative)) throw throughLink();
    if (located.missing.length !== 1) {
      throw new ToolError("CONFLICT", `${relative} is there already and is not a link`);
    }
    symlinkSync(target, at(root, located.parent, path.basename(relative)));
  } finally {
    located.close();
  }
}

/** Set or clear the executable bits of the file `relative`, opened without following a link. */
export function setExecutable(root: WorkspaceRoot, relative: string, executable: boolean) {
  inFolder(root, path.dirname(relative), (inside) => {
    // O_NONBLOCK: a FIFO a command swaps in after the write must not block the whole process.
    const fd = openSync(
      inside(path.basename(relative)),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return;
      const permissions = stat.mode & 0o777;
      const wanted = executable ? permissions | ((permissions & 0o444) >> 2) : permissions & ~0o111;
      if (wanted !== permissions) fchmodSync(fd, wanted);
    } finally {
      closeSync(fd);
    }
  });
}
