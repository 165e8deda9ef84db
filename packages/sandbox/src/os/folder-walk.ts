import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { ToolError } from "@pleach/core";
import {
  emptyListing,
  type FolderListing,
  FolderReader,
  RECENT_CHANGE_MS,
} from "./folder-reader.js";

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

/** How far past the folder limit a truncated search may grow by new empty folders, or shrink. */
const TRUNCATED_SLACK = 256;

/** Folders handled between yields to the event loop, so that a huge tree does not stall it. */
const FOLDERS_PER_TURN = 512;

/**
 * The folders of a workspace (breadth first, never following symbolic links nor entering `.git`,
 * up to `maxDirectories`), each with its listing, kept current by {@link update} from the folders
 * that may have changed.
 */
class FolderTree {
  readonly folders = new Map<string, FolderListing>();
  truncated = false;
  /** How many times the whole tree was searched (0: not yet). */
  walks = 0;

  constructor(
    readonly root: string,
    private readonly maxDirectories: number,
    /** Reads a folder; `undefined` when it is gone. */
    private readonly read: (folder: string) => FolderListing | undefined,
  ) {}

  /** Search the whole tree afresh; returns how many folders were read. */
  async walk(): Promise<number> {
    this.walks += 1;
    this.folders.clear();
    this.truncated = false;
    let level = [this.root];
    let work = 0;
    while (level.length > 0) {
      if (this.folders.size + level.length > this.maxDirectories) {
        level = level.slice(0, Math.max(0, this.maxDirectories - this.folders.size));
        this.truncated = true;
      }
      const next: string[] = [];
      for (const folder of level) {
        if (++work % FOLDERS_PER_TURN === 0) await nextTurn();
        // A folder that vanished meanwhile still counts against the limit, as an empty one.
        const listing = this.read(folder) ?? emptyListing();
        this.folders.set(folder, listing);
        for (const name of listing.subfolders) next.push(path.join(folder, name));
      }
      if (this.truncated) break;
      level = next;
    }
    return this.folders.size;
  }

  /**
   * Read `stale` folders again; search their new subfolders and forget removed ones. A folder
   * whose path now names another folder (another device or inode) has what was known below it
   * forgotten and is searched as new. When the search had hit the folder limit, new empty folders
   * join it and removed ones leave it (within a small slack of the limit), while a new folder with
   * subfolders, or many gone, has the tree searched from scratch, so that the limit still covers
   * the shallowest folders. Returns how many folders were read.
   */
  async update(stale: Iterable<string>): Promise<number> {
    const known = this.folders;
    const added: string[] = [];
    let listed = 0;
    let work = 0;
    for (const folder of stale) {
      if (++work % FOLDERS_PER_TURN === 0) await nextTurn();
      const before = known.get(folder);
      // Unknown, or forgotten with a folder above it earlier in this loop.
      if (before === undefined) continue;
      let replaced = false;
      let listing = this.read(folder);
      listed += 1;
      if (!replaced && listing !== undefined && !sameFolder(before, listing)) {
        if (folder === this.root) return this.walk();
        replaced = true;
        this.forgetBelow(folder, before);
        listing = this.read(folder);
        listed += 1;
      }
      if (listing === undefined) {
        if (folder === this.root) return this.walk();
        this.forgetTree(folder);
        continue;
      }
      known.set(folder, listing);
      const now = new Set(listing.subfolders);
      if (!replaced) {
        for (const name of before.subfolders) {
          if (!now.has(name)) this.forgetTree(path.join(folder, name));
        }
      }
      for (const name of listing.subfolders) {
        const subfolder = path.join(folder, name);
        if (!known.has(subfolder)) added.push(subfolder);
      }
    }
    // A folder added above may have been forgotten with its parent later in the loop.
    let level = added.filter((folder) => !known.has(folder) && known.has(path.dirname(folder)));
    if (this.truncated) {
      if (known.size < this.maxDirectories - TRUNCATED_SLACK) return this.walk();
      for (const folder of level) {
        const listing = this.read(folder) ?? emptyListing();
        listed += 1;
        if (listing.subfolders.length > 0 || known.size >= this.maxDirectories + TRUNCATED_SLACK) {
          return this.walk();
        }
        known.set(folder, listing);
      }
      return listed;
    }
    while (level.length > 0) {
      if (known.size + level.length > this.maxDirectories) return this.walk();
      const next: string[] = [];
      for (const folder of level) {
        if (++work % FOLDERS_PER_TURN === 0) await nextTurn();
        const listing = this.read(folder) ?? emptyListing();
        listed += 1;
        known.set(folder, listing);
        for (const name of listing.subfolders) next.push(path.join(folder, name));
      }
      level = next;
    }
    return listed;
  }

  /** Forget `folder` and everything known beneath it. */
  private forgetTree(folder: string): void {
    const listing = this.folders.get(folder);
    if (listing === undefined) return;
    this.folders.delete(folder);
    this.forgetBelow(folder, listing);
  }

  /** Forget everything known beneath `folder`, through the known listings. */
  private forgetBelow(folder: string, listing: FolderListing): void {
    const gone = listing.subfolders.map((name) => path.join(folder, name));
    for (let next = gone.pop(); next !== undefined; next = gone.pop()) {
      const below = this.folders.get(next);
      if (below === undefined) continue;
      this.folders.delete(next);
      for (const name of below.subfolders) gone.push(path.join(next, name));
    }
  }
}

/** Whether both listings are of the same folder (not another one that took its path). */
function sameFolder(before: FolderListing, now: FolderListing): boolean {
  // A listing that vouched for nothing (gone, out of reach) is replaced whatever comes.
  return before.device === now.device && before.inode === now.inode && before.device !== -1;
}

/**
 * The walk of a workspace whose protection depends on it: refused when it was cut at the folder
 * limit, since a repository past the cut could not be protected (a command can make folders
 * faster than any limit grows).
 */
export async function completeScan(
  walker: WorkspaceWalker,
  maxDirectories: number,
): Promise<WorkspaceScan> {
  const walk = await walker.scan();
  const [tooDeep] = walk.outOfReach;
  if (tooDeep !== undefined) {
    throw new ToolError(
      "TOO_LARGE",
      `a folder of the workspace lies deeper than a path can name (${tooDeep.slice(0, 120)}...), so the repositories below it cannot be found and protected; writes and workspace-write commands are refused here. Remove that folder tree (in read-only mode nothing is refused).`,
      { details: { folder: tooDeep } },
    );
  }
  if (walk.truncated) {
    throw new ToolError(
      "TOO_LARGE",
      `the workspace has more than ${maxDirectories.toLocaleString("en-US")} folders, so nested repositories cannot all be found and protected; writes and workspace-write commands are refused here. Remove generated folders, choose a smaller workspace, use read-only mode, or raise maxDirectories.`,
      { details: { maxDirectories } },
    );
  }
  return walk;
}
