import { lstatSync } from "node:fs";
import path from "node:path";
import { isInside } from "../paths.js";
import { FolderReader, RECENT_CHANGE_MS } from "./folder-reader.js";
import {
  currentStep,
  type FileRead,
  type Lookups,
  recordLookups,
  type Step,
  sameStep,
  smallFileText,
} from "./host-lookups.js";
import {
  type FolderWatcher,
  inotifyQueue,
  watchFolder as inotifyWatch,
  type QueueMark,
  type WatchFolder,
} from "./inotify-queue.js";

/** Options of {@link LookupMemo}. */
export interface LookupMemoOptions {
  /** How a folder is watched; tests inject failures. @default `fs.watch` */
  watchFolder?: WatchFolder;
}

interface Entry {
  value: unknown;
  /** The inotify queue when its lookups began. */
  mark: QueueMark;
  /** The folders it looked in. */
  folders: ReadonlySet<string>;
  files: ReadonlyMap<string, FileRead>;
  /** What it found at each path it looked up in a folder it may search but not watch. */
  rechecks: ReadonlyMap<string, Step>;
}

/** Values kept at most: one per workspace and policy in practice. */
const MOST_ENTRIES = 64;

/** Gets for which the memo stays off after a flood of events, at most. */
const MOST_PAUSED_GETS = 64;

/**
 * Values computed from lookups of the host's file system (`host-lookups.ts`), kept while nothing
 * they looked at changed, as inotify tells: each folder they looked in is watched, and an event
 * in one drops the values that looked in it. So a command in a session that was idle costs no
 * policy work beyond the workspace walk's barrier, while a change made before the call is always
 * seen.
 *
 * A kept value is used only after a barrier of the same call (a workspace scan that tracked
 * events), which has delivered every event of a change completed before the call began. It is
 * kept only when every folder it depends on was watched before its lookups began (a watcher set
 * after a lookup could miss a change between the two: the next call computes it again, then with
 * the watchers in place), and on a file system whose changes show locally (not a network or FUSE
 * one). A folder this process may search but not read cannot be watched (inotify needs read
 * permission): what was looked up in it is looked at again instead. It is dropped when:
 *
 * - a folder it looked in has an event (an entry created, removed, renamed, its mode or content
 *   changed), or its watcher fails;
 * - the inotify queue may have overflowed since its lookups began (as many events arrived as the
 *   queue holds, or a watcher of this thread was closed: libuv drops their queued events, and the
 *   overflow notice);
 * - a file it read reads otherwise now: it is read again on every use (a write through a hard
 *   link or a shared memory map makes no event in the file's folder, and one through a map written
 *   to before moves no stamp, nor does a second write within the same clock tick).
 * - an entry it looked up in a folder it may not read is another now (its inode, mode, owner,
 *   size, times, a link's target), looked at again on every use.
 *
 * A watcher whose folder was replaced (an event names it in its parent) is closed, so that the
 * next computation watches the folder now at that path. Mounts made on the host are not events;
 * commands cannot make them there.
 */
export class LookupMemo {
  readonly #watchFolder: WatchFolder;
  readonly #queue = inotifyQueue();
  readonly #reader: FolderReader;
  readonly #watchers = new Map<string, FolderWatcher>();
  /**
   * Folders this process may search but not read (an inotify watch needs read permission), such
   * as a daemon's socket folder: what was looked up in them is looked at again on every use.
   */
  readonly #unreadable = new Set<string>();
  /** For each folder, the watched folders below it, at any depth (an event's cost stays small). */
  readonly #below = new Map<string, Set<string>>();
  readonly #entries = new Map<string, Entry>();
  /** Events since the last get: as many as the queue holds are a flood. */
  #sinceGet = 0;
  #floods = 0;
  #pausedGets = 0;
  /** Why nothing is kept for good (the watch limit reached), when so. */
  #disabled: string | undefined;

  constructor({ watchFolder = inotifyWatch }: LookupMemoOptions = {}) {
    this.#watchFolder = watchFolder;
    this.#reader = new FolderReader(RECENT_CHANGE_MS);
    if (process.platform !== "linux") this.#disabled = "inotify is Linux's";
  }

  /** Why values are not kept, when they are not (for tests and notes). */
  get disabled(): string | undefined {
    return this.#disabled;
  }

  /** How many folders are watched. */
  get watched(): number {
    return this.#watchers.size;
  }

  /**
   * `compute()`'s value for `key` (which must name every input of `compute` that is not a
   * lookup), the kept one when it still holds and `afterBarrier` says this call has passed a
   * barrier; otherwise computed now, with its lookups recorded, and kept when it may be. A
   * `compute` that throws keeps nothing.
   */
  get<T>(key: string, afterBarrier: boolean, compute: () => T): T {
    this.#sinceGet = 0;
    const kept = this.#entries.get(key);
    if (kept !== undefined) {
      this.#entries.delete(key);
      if (afterBarrier && this.#holds(kept)) {
        // Most recently used last.
        this.#entries.set(key, kept);
        return kept.value as T;
      }
    }
    const mark = { received: this.#queue.received, closures: this.#queue.closures };
    const { value, lookups } = recordLookups(compute);
    // Every caller gets the same value: none may change it.
    deepFreeze(value);
    if (this.#pausedGets > 0) {
      this.#pausedGets -= 1;
      return value;
    }
    if (this.#disabled === undefined && this.#watchAll(lookups)) {
      const [oldest] = this.#entries.keys();
      const full = this.#entries.size >= MOST_ENTRIES && oldest !== undefined;
      if (full) this.#entries.delete(oldest);
      const rechecks = new Map<string, Step>();
      for (const [looked, found] of lookups.steps) {
        if (this.#unreadable.has(path.dirname(looked))) rechecks.set(looked, found);
      }
      this.#entries.set(key, {
        value,
        mark,
        folders: lookups.folders,
        files: lookups.files,
        rechecks,
      });
      // The folders only dropped values looked in would stay watched for good (a server that
      // served many workspaces would reach the watch budget and keep nothing more).
      if (full) {
        const lookedIn = new Set<string>();
        for (const entry of this.#entries.values())
          for (const each of entry.folders) lookedIn.add(each);
        this.#unwatch([...this.#watchers.keys()].filter((folder) => !lookedIn.has(folder)));
      }
    }
    return value;
  }

  /** Drop every kept value and watcher. */
  close(): void {
    this.#entries.clear();
    this.#unreadable.clear();
    this.#unwatch([...this.#watchers.keys()]);
  }

  #holds(entry: Entry): boolean {
    if (this.#queue.closures !== entry.mark.closures) return false;
    if (this.#queue.received - entry.mark.received >= this.#queue.limit) return false;
    for (const [file, read] of entry.files) {
      if (smallFileText(file, read.maxBytes) !== read.text) return false;
    }
    for (const [looked, found] of entry.rechecks) {
      if (!sameStep(found, currentStep(looked))) return false;
    }
    return true;
  }

  /**
   * Watch every folder of `lookups` (or know it for one this process may not read); true when
   * all were watched or known already (so before the lookups began) and each is on a file system
   * whose changes show here.
   */
  #watchAll(lookups: Lookups): boolean {
    let before = true;
    for (const folder of lookups.folders) {
      if (this.#watchers.has(folder) || this.#unreadable.has(folder)) continue;
      before = false;
      if (!this.#watch(folder)) return false;
    }
    return before;
  }

  #watch(folder: string): boolean {
    const info = lstatSync(folder, { throwIfNoEntry: false });
    if (info?.isDirectory() !== true || !this.#reader.trusts(info.dev, folder)) return false;
    if (this.#queue.live >= this.#queue.budget) {
      this.#disable(`more than ${this.#queue.budget} folders to watch`);
      return false;
    }
    let watcher: FolderWatcher;
    try {
      watcher = this.#watchFolder(folder, {
        change: (name) => {
          this.#queue.count();
          this.#forget(folder);
          this.#sinceGet += 1;
          if (this.#sinceGet === this.#queue.limit) {
            this.#flood();
            return;
          }
          // An entry of a watched folder changed: if it is a watched folder itself, its path may
          // name another folder now. (A folder's parent is always watched with it: a walk looks
          // in the parent to reach it.)
          if (name !== null) {
            const entry = path.join(folder, name);
            this.#unwatchTree(entry);
            for (const each of this.#unreadable) {
              if (isInside(entry, each)) this.#unreadable.delete(each);
            }
          }
        },
        error: () => {
          // Node closed the watcher: its queued events are gone. The watchers below it go too:
          // a folder swapped in below it now would make no event they see (theirs stay on the
          // folders swapped out), nor one here.
          this.#queue.closures += 1;
          this.#forget(folder);
          if (this.#watchers.get(folder) === watcher) {
            this.#unwatchTree(folder);
          }
        },
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOSPC" || code === "EMFILE" || code === "ENFILE" || code === "ENOMEM") {
        this.#disable(`inotify: ${code}`);
      }
      // Searchable but not readable: its lookups are checked on every use instead. Its parent,
      // watched, has an event if its mode changes.
      if (code === "EACCES") {
        this.#unreadable.add(folder);
        return true;
      }
      return false;
    }
    this.#watchers.set(folder, watcher);
    for (const above of ancestors(folder)) {
      const below = this.#below.get(above) ?? new Set<string>();
      below.add(folder);
      this.#below.set(above, below);
    }
    this.#queue.live += 1;
    return true;
  }

  /** Close the watchers of `top` and of every folder below it. */
  #unwatchTree(top: string): void {
    const below = this.#below.get(top);
    if (below === undefined && !this.#watchers.has(top)) return;
    this.#unwatch([top, ...(below ?? [])]);
  }

  /** Close the watchers of `folders` (their queued events are lost: a closure). */
  #unwatch(folders: readonly string[]): void {
    let closed = 0;
    for (const folder of folders) {
      const watcher = this.#watchers.get(folder);
      if (watcher === undefined) continue;
      this.#watchers.delete(folder);
      for (const above of ancestors(folder)) {
        const below = this.#below.get(above);
        below?.delete(folder);
        if (below?.size === 0) this.#below.delete(above);
      }
      watcher.close();
      closed += 1;
    }
    if (closed === 0) return;
    // Every kept value is dropped with them: a closure makes the queue's count say so.
    this.#queue.closures += 1;
    this.#queue.live -= closed;
  }

  /** Drop the values that looked in `folder`. */
  #forget(folder: string): void {
    for (const [key, entry] of this.#entries) {
      if (entry.folders.has(folder)) this.#entries.delete(key);
    }
  }

  /**
   * As many events as the queue holds arrived since the last get: libuv reads the queue until it
   * is empty, so a command making events in a watched folder would keep this thread busy. The
   * watchers close, and values are not kept (nor folders watched) for the next gets, more of them
   * after each flood.
   */
  #flood(): void {
    this.#floods += 1;
    this.#pausedGets = Math.min(MOST_PAUSED_GETS, 2 ** this.#floods);
    this.close();
  }

  #disable(why: string): void {
    this.#disabled = why;
    this.close();
  }
}

function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const each of Object.values(value)) deepFreeze(each);
}

/** The folders above `folder`, up to `/`. */
function ancestors(folder: string): string[] {
  const above: string[] = [];
  for (let current = folder; current !== "/"; ) {
    current = path.dirname(current);
    above.push(current);
  }
  return above;
}
