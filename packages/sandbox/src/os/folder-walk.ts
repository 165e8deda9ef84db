import {
  accessSync,
  constants,
  type Dirent,
  lstatSync,
  readdirSync,
  type Stats,
  statfsSync,
} from "node:fs";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { isInsideAny } from "../paths.js";

/**
 * What a folder held when it was read, and what `lstat` said of it just before, so that a later
 * `lstat` can tell whether the listing still holds without reading the folder again.
 */
export interface FolderListing {
  device: number;
  inode: number;
  /** The inode change time. Creating, removing or renaming an entry sets it, and nobody can set it back. */
  changedMs: number;
  modifiedMs: number;
  /**
   * Whether the stamp cannot vouch for the listing, so the folder is read again next time: it
   * changed too recently to rule out a change within the same clock tick, or its file system is
   * not one whose change times are trusted.
   */
  recheck: boolean;
  /** Names of the subfolders (not `.git`, not symbolic links). */
  subfolders: string[];
  /** Whether the folder has an entry named `.git`, of any type. */
  hasGitEntry: boolean;
  /** Names of the Unix sockets in it. */
  sockets: string[];
  /** Whether it could not be listed (no permission): what it holds is unknown. */
  unreadable: boolean;
  /** Whether its path is too long to name (ENAMETOOLONG): the scan cannot see it at all. */
  outOfReach?: boolean;
}

/** The listing of a folder deeper than a path can name, read again on every scan. */
function outOfReach(): FolderListing {
  return { ...emptyListing(), outOfReach: true };
}

/**
 * How long after a change a folder's stamp is not trusted. Change times come from a clock that
 * lags by up to a timer tick and are truncated to the file system's granularity (1 s on ext4 with
 * small inodes), so a change landing in the same tick as the read could leave the time unchanged.
 */
const RECENT_CHANGE_MS = 2_000;

/**
 * File systems (statfs magic numbers) that set a folder's change time on every entry created,
 * removed or renamed in it, from the local clock. Network and FUSE file systems may cache
 * attributes or take the time from another clock, so their folders are read on every call.
 */
const TRUSTED_FILE_SYSTEMS = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0xca451a4e, // bcachefs
]);

/** Reads folders and remembers, per device, whether change times there can be trusted. */
class FolderReader {
  private readonly trusted = new Map<number, boolean>();
  private readonly recentChangeMs: number;

  constructor(recentChangeMs: number) {
    this.recentChangeMs = recentChangeMs;
  }

  /** Read `folder`'s entries, stamped; `undefined` when it is gone or no longer a folder. */
  read(folder: string): FolderListing | undefined {
    // The clock is read before lstat: a change after the lstat then gets a later change time.
    const now = Date.now();
    let info: Stats | undefined;
    try {
      info = lstatSync(folder, { throwIfNoEntry: false });
    } catch (error) {
      // Deeper than a path can name: what it holds cannot be seen, and the scan says so.
      if ((error as NodeJS.ErrnoException).code === "ENAMETOOLONG") return outOfReach();
      // Out of reach (a parent lost its search permission): its parent's change shows that.
      return undefined;
    }
    if (info === undefined || !info.isDirectory()) return undefined;
    let entries: Dirent[];
    let unreadable = false;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
      // Listed but not searchable (mode 0600, say): its subfolders cannot be read either.
      accessSync(folder, constants.X_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Swapped for a file or removed since the lstat: gone, as its parent's change shows.
      if (code === "ENOTDIR" || code === "ENOENT") return undefined;
      if (code === "ENAMETOOLONG") return outOfReach();
      // Unreadable: what it holds is unknown, so the policy protects it whole; read again once
      // its permissions (its ctime) change.
      entries = [];
      unreadable = true;
    }
    const listing: FolderListing = {
      device: info.dev,
      inode: info.ino,
      changedMs: info.ctimeMs,
      modifiedMs: info.mtimeMs,
      recheck: info.ctimeMs >= now - this.recentChangeMs || !this.isTrusted(info.dev, folder),
      subfolders: [],
      hasGitEntry: false,
      sockets: [],
      unreadable,
    };
    for (const entry of entries) {
      if (entry.name === ".git") listing.hasGitEntry = true;
      else if (entry.isDirectory()) listing.subfolders.push(entry.name);
      else if (entry.isSocket()) listing.sockets.push(entry.name);
    }
    return listing;
  }

  /** Whether `listing` still describes `folder`, by one `lstat`. */
  holds(folder: string, listing: FolderListing): boolean {
    if (listing.recheck) return false;
    const info = lstatSync(folder, { throwIfNoEntry: false });
    return info?.isDirectory() === true && sameStamp(listing, info);
  }

  private isTrusted(device: number, folder: string): boolean {
    let trusted = this.trusted.get(device);
    if (trusted === undefined) {
      try {
        trusted = TRUSTED_FILE_SYSTEMS.has(statfsSync(folder).type);
      } catch {
        trusted = false;
      }
      this.trusted.set(device, trusted);
    }
    return trusted;
  }
}

function sameStamp(listing: FolderListing, info: Stats): boolean {
  return (
    listing.device === info.dev &&
    listing.inode === info.ino &&
    listing.changedMs === info.ctimeMs &&
    listing.modifiedMs === info.mtimeMs
  );
}

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

function emptyListing(): FolderListing {
  return {
    device: -1,
    inode: -1,
    changedMs: -1,
    modifiedMs: -1,
    recheck: true,
    subfolders: [],
    hasGitEntry: false,
    sockets: [],
    unreadable: false,
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

/** Options of {@link createFolderWatch}. */
export interface FolderWatchOptions {
  /** @default 2_000 */
  recentChangeMs?: number;
}

/**
 * Listings of a few fixed folders (outside the workspace), each read again only when its stamp
 * says it changed. A missing folder is looked at again every time.
 */
export function createFolderWatch({ recentChangeMs = RECENT_CHANGE_MS }: FolderWatchOptions = {}): {
  listing(folder: string): FolderListing | undefined;
} {
  const reader = new FolderReader(recentChangeMs);
  const listings = new Map<string, FolderListing>();
  return {
    listing(folder) {
      const known = listings.get(folder);
      if (known !== undefined && reader.holds(folder, known)) return known;
      const listing = reader.read(folder);
      if (listing === undefined) listings.delete(folder);
      else listings.set(folder, listing);
      return listing;
    },
  };
}
