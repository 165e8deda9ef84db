import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { emptyListing, type FolderListing } from "./folder-reader.js";

/** How far past the folder limit a truncated search may grow by new empty folders, or shrink. */
const TRUNCATED_SLACK = 256;

/** Folders handled between yields to the event loop, so that a huge tree does not stall it. */
export const FOLDERS_PER_TURN = 512;

/**
 * The folders of a workspace (breadth first, never following symbolic links nor entering `.git`,
 * up to `maxDirectories`), each with its listing, kept current by {@link update} from the folders
 * that may have changed.
 */
export class FolderTree {
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
