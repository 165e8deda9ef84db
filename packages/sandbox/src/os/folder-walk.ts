import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { isInsideAny } from "../paths.js";
import {
  emptyListing,
  type FolderListing,
  FolderReader,
  RECENT_CHANGE_MS,
} from "./folder-reader.js";

/** The part of a workspace tree that matters to the sandbox. */
export interface WorkspaceScan {
  /** Every `.git` entry below the root (not the root's own), sorted. */
  gitEntries: string[];
  /** Every Unix socket in the searched folders, sorted. */
  sockets: string[];
  /** Every folder that could not be listed, sorted: what is below it is unknown. */
  unreadable: string[];
  /** Folders too deep to name by path, sorted: the scan is incomplete while there are any. */
  outOfReach: string[];
  /** How many folders the search covers. */
  directories: number;
  /** Whether the search stopped at the folder limit. */
  truncated: boolean;
  /** How many folders were read this time; the others were vouched for by their stamps. */
  listed: number;
}

/** Options of {@link createWorkspaceWalker}. */
export interface WorkspaceWalkerOptions {
  /** Real path of the workspace root. */
  root: string;
  /** The most folders searched, breadth first. */
  maxDirectories: number;
  /**
   * How long after a change a folder is read again regardless of its stamp.
   * @default 2_000
   */
  recentChangeMs?: number;
}

/** Searches a workspace tree for nested `.git` entries and sockets, reusing what it found before. */
export interface WorkspaceWalker {
  /**
   * The tree as it is now: every change completed before this call is seen. Calls are serialized;
   * concurrent callers share a scan that starts after all of them arrived.
   */
  scan(): Promise<WorkspaceScan>;
}

/** How far past the folder limit a truncated search may grow by new empty folders, or shrink. */
const TRUNCATED_SLACK = 256;

/** Folders handled between yields to the event loop, so that a huge tree does not stall it. */
const FOLDERS_PER_TURN = 512;

/**
 * A walker over `root`. The first scan reads every folder (breadth first, never following
 * symbolic links nor entering `.git`, stopping at `maxDirectories`). Later scans `lstat` each
 * folder found before and read again only those whose device, inode, change or modification time
 * differ, that changed within the last `recentChangeMs`, or that live on an untrusted file system;
 * new subfolders are then searched and removed ones forgotten. A folder's change time moves with
 * every entry created, removed or renamed in it, and a command cannot set it back (`touch -d`
 * sets it to now), so a `.git` or socket made anywhere in the searched tree, by the host or by a
 * sandboxed command, is found by the next scan. When the search had hit the folder limit, new
 * empty folders join it and removed ones leave it (within a small slack of the limit), while a new
 * folder with subfolders, or many gone, has the tree searched from scratch, so that the limit
 * still covers the shallowest folders.
 */
export function createWorkspaceWalker({
  root,
  maxDirectories,
  recentChangeMs = RECENT_CHANGE_MS,
}: WorkspaceWalkerOptions): WorkspaceWalker {
  const reader = new FolderReader(recentChangeMs);
  let folders: Map<string, FolderListing> | undefined;
  let truncated = false;
  let summary: Omit<WorkspaceScan, "listed"> | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let queued: Promise<WorkspaceScan> | undefined;

  async function fullWalk(): Promise<number> {
    const found = new Map<string, FolderListing>();
    truncated = false;
    let level = [root];
    let work = 0;
    while (level.length > 0) {
      if (found.size + level.length > maxDirectories) {
        level = level.slice(0, Math.max(0, maxDirectories - found.size));
        truncated = true;
      }
      const next: string[] = [];
      for (const folder of level) {
        if (++work % FOLDERS_PER_TURN === 0) await nextTurn();
        // A folder that vanished meanwhile still counts against the limit, as an empty one.
        const listing = reader.read(folder) ?? emptyListing();
        found.set(folder, listing);
        for (const name of listing.subfolders) next.push(path.join(folder, name));
      }
      if (truncated) break;
      level = next;
    }
    folders = found;
    summary = undefined;
    return found.size;
  }

  async function update(known: Map<string, FolderListing>): Promise<number> {
    const stale: string[] = [];
    let work = 0;
    for (const [folder, listing] of known) {
      if (++work % FOLDERS_PER_TURN === 0) await nextTurn();
      if (!reader.holds(folder, listing)) stale.push(folder);
    }
    if (stale.length === 0) return 0;
    summary = undefined;
    const removed = new Set<string>();
    const added: string[] = [];
    let listed = 0;
    for (const folder of stale) {
      const before = known.get(folder);
      if (before === undefined || isInsideAny(removed, folder)) continue;
      const listing = reader.read(folder);
      listed += 1;
      if (listing === undefined) {
        removed.add(folder);
        continue;
      }
      known.set(folder, listing);
      const now = new Set(listing.subfolders);
      for (const name of before.subfolders) {
        if (!now.has(name)) removed.add(path.join(folder, name));
      }
      const had = new Set(before.subfolders);
      for (const name of listing.subfolders) {
        if (!had.has(name)) added.push(path.join(folder, name));
      }
    }
    if (removed.has(root)) return fullWalk();
    // Forget each removed folder and everything known beneath it, through the known listings.
    const gone = [...removed];
    for (let folder = gone.pop(); folder !== undefined; folder = gone.pop()) {
      const listing = known.get(folder);
      if (listing === undefined) continue;
      known.delete(folder);
      for (const name of listing.subfolders) gone.push(path.join(folder, name));
    }
    let level = added.filter((folder) => !known.has(folder));
    if (truncated) {
      // Past the limit, new empty folders (placeholders, fresh output folders) join the search;
      // a new folder with subfolders, or many gone, and the tree is searched again from scratch
      // so that the limit keeps covering the shallowest folders.
      if (known.size < maxDirectories - TRUNCATED_SLACK) return fullWalk();
      for (const folder of level) {
        const listing = reader.read(folder) ?? emptyListing();
        listed += 1;
        if (listing.subfolders.length > 0 || known.size >= maxDirectories + TRUNCATED_SLACK) {
          return fullWalk();
        }
        known.set(folder, listing);
      }
      return listed;
    }
    while (level.length > 0) {
      if (known.size + level.length > maxDirectories) return fullWalk();
      const next: string[] = [];
      for (const folder of level) {
        if (++work % FOLDERS_PER_TURN === 0) await nextTurn();
        const listing = reader.read(folder) ?? emptyListing();
        listed += 1;
        known.set(folder, listing);
        for (const name of listing.subfolders) next.push(path.join(folder, name));
      }
      level = next;
    }
    return listed;
  }

  async function scanNow(): Promise<WorkspaceScan> {
    const listed = folders === undefined ? await fullWalk() : await update(folders);
    const known = folders ?? new Map<string, FolderListing>();
    summary ??= summarize(root, known, truncated);
    return {
      ...summary,
      gitEntries: [...summary.gitEntries],
      sockets: [...summary.sockets],
      unreadable: [...summary.unreadable],
      outOfReach: [...summary.outOfReach],
      listed,
    };
  }

  return {
    scan() {
      // Joining a scan that has not started yet is sound: it will see everything done until now.
      if (queued !== undefined) return queued;
      const scan = running.then(() => {
        queued = undefined;
        return scanNow();
      });
      queued = scan;
      running = scan.catch(() => {});
      return scan;
    },
  };
}

function summarize(
  root: string,
  folders: ReadonlyMap<string, FolderListing>,
  truncated: boolean,
): Omit<WorkspaceScan, "listed"> {
  const gitEntries: string[] = [];
  const sockets: string[] = [];
  const unreadable: string[] = [];
  const outOfReachFolders: string[] = [];
  for (const [folder, listing] of folders) {
    if (listing.hasGitEntry && folder !== root) gitEntries.push(path.join(folder, ".git"));
    if (listing.unreadable) unreadable.push(folder);
    if (listing.outOfReach) outOfReachFolders.push(folder);
    for (const name of listing.sockets) sockets.push(path.join(folder, name));
  }
  return {
    gitEntries: gitEntries.sort(),
    sockets: sockets.sort(),
    unreadable: unreadable.sort(),
    outOfReach: outOfReachFolders.sort(),
    directories: folders.size,
    truncated,
  };
}
