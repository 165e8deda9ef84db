import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { type FolderListing, FolderReader, RECENT_CHANGE_MS } from "./folder-reader.js";
import { FOLDERS_PER_TURN, FolderTree } from "./folder-tree.js";

/** The part of a workspace tree that matters to the sandbox. */
export interface WorkspaceScan {
  /**
   * Every `.git` entry below the root (not the root's own), and every folder git would take for a
   * git directory itself (a bare layout: `HEAD`, `objects/`, `refs/`, the root too), sorted.
   */
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
  /**
   * How this scan knew which folders to read again: `stamps` (one `lstat` per folder), or `walk`
   * (the whole tree was read).
   */
  tracking: "stamps" | "walk";
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
  /** Forget the tree (a later scan searches it again). */
  close(): void;
}

/**
 * A walker over `root`. The first scan reads every folder (breadth first, never following
 * symbolic links nor entering `.git`, stopping at `maxDirectories`). Later scans `lstat` each
 * folder found before and read it again when its device, inode, change or modification time
 * differ, when it changed within the last `recentChangeMs`, or when it lives on a file system
 * whose change times may not show every change here (network, FUSE). A folder's change time moves
 * with every entry created, removed or renamed in it, and a command cannot set it back (`touch -d`
 * sets it to now), so a `.git` or socket made anywhere in the tree is found by the next scan. Only
 * the listings are kept between scans: what is derived from them is derived afresh by each caller.
 */
export function createWorkspaceWalker({
  root,
  maxDirectories,
  recentChangeMs = RECENT_CHANGE_MS,
}: WorkspaceWalkerOptions): WorkspaceWalker {
  const reader = new FolderReader(recentChangeMs);
  const tree = new FolderTree(root, maxDirectories, (folder) => reader.read(folder));
  let running: Promise<unknown> = Promise.resolve();
  let queued: Promise<WorkspaceScan> | undefined;

  /** Whether the stamp still holds; a path that cannot be looked at (a parent made a file) does not. */
  function holds(folder: string, listing: FolderListing): boolean {
    try {
      return reader.holds(folder, listing);
    } catch {
      return false;
    }
  }

  async function staleByStamps(): Promise<string[]> {
    const stale: string[] = [];
    let work = 0;
    for (const [folder, listing] of tree.folders) {
      if (++work % FOLDERS_PER_TURN === 0) await nextTurn();
      if (!holds(folder, listing)) stale.push(folder);
    }
    return stale;
  }

  async function scanNow(): Promise<WorkspaceScan> {
    const walks = tree.walks;
    const listed = walks === 0 ? await tree.walk() : await tree.update(await staleByStamps());
    return {
      ...summarize(root, tree.folders, tree.truncated),
      listed,
      tracking: tree.walks === walks ? "stamps" : "walk",
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
    close() {
      tree.walks = 0;
    },
  };
}

function summarize(
  root: string,
  folders: ReadonlyMap<string, FolderListing>,
  truncated: boolean,
): Omit<WorkspaceScan, "listed" | "tracking"> {
  const gitEntries: string[] = [];
  const sockets: string[] = [];
  const unreadable: string[] = [];
  const outOfReachFolders: string[] = [];
  for (const [folder, listing] of folders) {
    if (listing.hasGitEntry && folder !== root) gitEntries.push(path.join(folder, ".git"));
    if (listing.gitDirectory === true) gitEntries.push(folder);
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
