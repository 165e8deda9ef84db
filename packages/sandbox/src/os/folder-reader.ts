import {
  accessSync,
  constants,
  type Dirent,
  lstatSync,
  readdirSync,
  type Stats,
  statfsSync,
} from "node:fs";
import { holdsGitDirectoryLayout } from "../git/git-machinery.js";

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
  /**
   * Whether git would take the folder itself for a git directory (a bare layout, see
   * `holdsGitDirectoryLayout`), whatever its name.
   */
  gitDirectory?: boolean;
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
export const RECENT_CHANGE_MS = 2_000;

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
export class FolderReader {
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
      recheck: info.ctimeMs >= now - this.recentChangeMs || !this.trusts(info.dev, folder),
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
    if (holdsGitDirectoryLayout(entries)) listing.gitDirectory = true;
    return listing;
  }

  /** Whether `listing` still describes `folder`, by one `lstat`. */
  holds(folder: string, listing: FolderListing): boolean {
    if (listing.recheck) return false;
    const info = lstatSync(folder, { throwIfNoEntry: false });
    return info?.isDirectory() === true && sameStamp(listing, info);
  }

  /** Whether changes on `folder`'s device (its file system type) can be trusted to show locally. */
  trusts(device: number, folder: string): boolean {
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

/** A listing that vouches for nothing: read again on every scan. */
export function emptyListing(): FolderListing {
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
