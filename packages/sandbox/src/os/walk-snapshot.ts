import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import type { FolderListing } from "./folder-reader.js";
import { userStateFolder } from "./user-state-folder.js";

/**
 * The walk of a workspace, kept for the next process (`${XDG_RUNTIME_DIR:-/tmp}/pleach-<uid>/walks/`,
 * private to the user): its folders with their listings and the stamps those were read under.
 * A process's first call then `lstat`s each folder instead of reading it, and reads again only
 * those whose stamp moved (see `FolderReader.holds`), as every later call without watchers does:
 * what the snapshot says of a folder is used only while the folder provably has not changed since.
 * A snapshot that is not a regular file of ours, private, well-formed and of this root is ignored.
 */

const FORMAT = "pleach-walk 3";
/** Snapshots kept, the newest (a workspace's is rewritten as it is used). */
const KEPT_SNAPSHOTS = 16;
/** A snapshot larger than this is not read. */
const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024;
const HAS_GIT = 1;
const UNREADABLE = 2;
const RECHECK = 4;
const GIT_DIRECTORY = 8;

/**
 * One folder: its path relative to the root, its stamp, its flags, and its sockets when it has
 * any. Its subfolders are the folders kept whose parent it is (a walk kept whole has them all).
 */
type Entry = [
  relative: string,
  device: number,
  inode: number,
  changedMs: number,
  modifiedMs: number,
  flags: number,
  sockets?: string[],
];

function snapshotFile(root: string): string | undefined {
  const state = userStateFolder("walks");
  if (!("folder" in state)) return undefined;
  return path.join(
    state.folder,
    `${createHash("sha256").update(root).digest("hex").slice(0, 32)}.json`,
  );
}

/**
 * Keep `folders` as the walk of `root` (never a walk cut at the folder limit: what lies past it
 * would be missing). Listings to be read again anyway (changed too recently, on an untrusted file
 * system, out of reach) are kept as such.
 */
export function saveWalkSnapshot(root: string, folders: ReadonlyMap<string, FolderListing>): void {
  const file = snapshotFile(root);
  if (file === undefined) return;
  const entries: Entry[] = [];
  for (const [folder, listing] of folders) {
    const flags =
      (listing.hasGitEntry ? HAS_GIT : 0) |
      (listing.gitDirectory === true ? GIT_DIRECTORY : 0) |
      (listing.unreadable ? UNREADABLE : 0) |
      (listing.recheck || listing.outOfReach === true ? RECHECK : 0);
    const stamp = [
      folder === root ? "" : folder.slice(root.length + 1),
      listing.device,
      listing.inode,
      listing.changedMs,
      listing.modifiedMs,
      flags,
    ] as const;
    entries.push(listing.sockets.length > 0 ? [...stamp, listing.sockets] : [...stamp]);
  }
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, JSON.stringify({ format: FORMAT, root, entries }), { mode: 0o600 });
    renameSync(temporary, file);
    pruneSnapshots(path.dirname(file));
  } catch {
    // Not kept: the next process walks the tree.
  }
}

/** Remove all but the newest {@link KEPT_SNAPSHOTS} snapshots (of workspaces long gone, say). */
function pruneSnapshots(folder: string): void {
  const snapshots = readdirSync(folder)
    .filter((name) => name.endsWith(".json"))
    .map((name) => {
      const file = path.join(folder, name);
      return { file, modified: lstatSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0 };
    })
    .sort((left, right) => right.modified - left.modified);
  for (const { file } of snapshots.slice(KEPT_SNAPSHOTS)) {
    try {
      unlinkSync(file);
    } catch {
      // Gone already.
    }
  }
}

/**
 * The walk of `root` an earlier process kept, as listings (each to be checked by its stamp before
 * use), or `undefined` when there is none to trust: then walk the tree.
 */
export function loadWalkSnapshot(
  root: string,
  maxDirectories: number,
): Map<string, FolderListing> | undefined {
  const file = snapshotFile(root);
  if (file === undefined) return undefined;
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    let text: string;
    try {
      const info = fstatSync(fd);
      if (
        !info.isFile() ||
        info.uid !== process.getuid?.() ||
        (info.mode & 0o077) !== 0 ||
        info.size > MAX_SNAPSHOT_BYTES
      ) {
        return undefined;
      }
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
    const saved = JSON.parse(text) as { format?: unknown; root?: unknown; entries?: unknown };
    if (saved.format !== FORMAT || saved.root !== root || !Array.isArray(saved.entries)) {
      return undefined;
    }
    if (saved.entries.length > maxDirectories) return undefined;
    const folders = new Map<string, FolderListing>();
    for (const entry of saved.entries as unknown[]) {
      const found = listingOf(root, entry);
      if (found === undefined || folders.has(found.folder)) return undefined;
      folders.set(found.folder, found.listing);
    }
    // Each folder is a subfolder of its parent, which must be kept too (parents come first).
    for (const folder of folders.keys()) {
      if (folder === root) continue;
      const cut = folder.lastIndexOf("/");
      const parent = folders.get(folder.slice(0, cut));
      if (parent === undefined) return undefined;
      parent.subfolders.push(folder.slice(cut + 1));
    }
    return folders.has(root) ? folders : undefined;
  } catch {
    return undefined;
  }
}

function listingOf(
  root: string,
  entry: unknown,
): { folder: string; listing: FolderListing } | undefined {
  if (!Array.isArray(entry) || (entry.length !== 6 && entry.length !== 7)) return undefined;
  const [relative, device, inode, changedMs, modifiedMs, flags, sockets = []] = entry as unknown[];
  if (typeof relative !== "string" || !(relative === "" || safeRelative(relative))) {
    return undefined;
  }
  if (![device, inode, changedMs, modifiedMs, flags].every((value) => typeof value === "number")) {
    return undefined;
  }
  if (!names(sockets)) return undefined;
  const bits = flags as number;
  return {
    folder: relative === "" ? root : `${root}/${relative}`,
    listing: {
      device: device as number,
      inode: inode as number,
      changedMs: changedMs as number,
      modifiedMs: modifiedMs as number,
      recheck: (bits & RECHECK) !== 0,
      subfolders: [],
      hasGitEntry: (bits & HAS_GIT) !== 0,
      ...((bits & GIT_DIRECTORY) !== 0 ? { gitDirectory: true } : {}),
      sockets,
      unreadable: (bits & UNREADABLE) !== 0,
    },
  };
}

/** A path below the root in the form the walk makes them: names joined by `/`, none empty, `.` or `..`. */
function safeRelative(relative: string): boolean {
  return relative.split("/").every((name) => name !== "" && name !== "." && name !== "..");
}

function names(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.every((name) => typeof name === "string" && safeRelative(name) && !name.includes("/"))
  );
}
