import path from "node:path";
import {
  type FolderWatcher,
  inotifyQueue,
  type QueueMark,
  type WatchFolder,
} from "./inotify-queue.js";

/** Thrown by {@link FolderWatches.watch} when no more watchers can be had: fall back to stamps. */
export class WatchesExhausted extends Error {}

/** Retired watchers kept before they are closed: closing one can drop events unseen (see below). */
const RETIRED_FLOOR = 1_024;

/**
 * The inotify watchers of one workspace walk, and the folders their events named since the last
 * {@link takeChanged}. A watcher is added before its folder is read, so a change is either in the
 * listing or in an event. Watchers of folders that left the tree are retired, not closed: libuv
 * drops the queued events of a closed watcher, which would spoil the overflow count, so they are
 * closed in batches, and the two barriers around a batch report a possible overflow.
 */
export class FolderWatches {
  private readonly watchers = new Map<string, FolderWatcher>();
  private retired: FolderWatcher[] = [];
  private changed = new Set<string>();
  private renamed = new Set<string>();
  /** Folders of the tree without a watcher: read again on every scan. */
  readonly unwatched = new Set<string>();
  private readonly queue = inotifyQueue();
  /** The queue at this walk's last two barriers (at the first watcher before there were two). */
  private marks: [QueueMark, QueueMark];

  /** Events of this walk since the scan began (see `onFlood`). */
  private sinceScan = 0;

  /**
   * `onFlood` is called once as many events as the queue holds arrived for this walk within one
   * scan's span: libuv reads the queue until it is empty, so a command making events faster than
   * they are handled would keep this thread busy; the owner closes the watchers then.
   */
  constructor(
    private readonly isKnown: (folder: string) => boolean,
    private readonly watchFolder: WatchFolder,
    private readonly onFlood: () => void,
  ) {
    const start = { received: this.queue.received, closures: this.queue.closures };
    this.marks = [start, start];
  }

  /** Whether `folder` has a watcher. */
  has(folder: string): boolean {
    return this.watchers.has(folder);
  }

  /**
   * Watch `folder` (before reading it). A folder that cannot be watched (gone, no permission) is
   * left {@link unwatched}; `WatchesExhausted` when the watch limit, the inotify instances or this
   * process's budget are used up.
   */
  watch(folder: string): void {
    if (this.watchers.has(folder)) return;
    if (this.queue.live >= this.queue.budget) {
      throw new WatchesExhausted(`more than ${this.queue.budget} folders to watch`);
    }
    let watcher: FolderWatcher;
    try {
      watcher = this.watchFolder(folder, {
        change: (name) => {
          this.queue.count();
          this.sinceScan += 1;
          if (this.sinceScan === this.queue.limit) this.onFlood();
          this.changed.add(folder);
          // A known folder named here was created, removed, renamed or had its mode changed: its
          // path may have named something else (a symbolic link, say) when it was watched.
          if (name !== null) {
            const entry = path.join(folder, name);
            if (this.isKnown(entry)) {
              this.changed.add(entry);
              this.renamed.add(entry);
            }
          }
        },
        error: () => {
          // Node closed the watcher: its queued events are gone, and the folder is watched no more.
          this.queue.closures += 1;
          if (this.watchers.get(folder) === watcher) {
            this.forget(folder);
            this.unwatched.add(folder);
          }
        },
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOSPC" || code === "EMFILE" || code === "ENFILE" || code === "ENOMEM") {
        throw new WatchesExhausted(
          code === "ENOSPC" ? "the inotify watch limit is reached (ENOSPC)" : `inotify: ${code}`,
        );
      }
      this.unwatched.add(folder);
      return;
    }
    this.watchers.set(folder, watcher);
    this.queue.live += 1;
    this.unwatched.delete(folder);
  }

  /** `folder` left the tree (or another folder took its path): retire its watcher. */
  forget(folder: string): void {
    this.unwatched.delete(folder);
    const watcher = this.watchers.get(folder);
    if (watcher === undefined) return;
    this.watchers.delete(folder);
    this.retired.push(watcher);
  }

  /**
   * Wait until every event queued before the call has been dispatched, first closing the retired
   * watchers if there are many. Returns whether events may have been lost since the barrier
   * before the last one (an overflowing queue may hold events from both sides of the last): at
   * least `max_queued_events` arrived (an overflow would have delivered that many), or a watcher
   * was closed or failed.
   */
  async barrier(): Promise<{ overflow: boolean }> {
    if (this.retired.length >= Math.max(RETIRED_FLOOR, this.watchers.size / 4)) this.closeRetired();
    const mark = await this.queue.barrier();
    const [before] = this.marks;
    this.marks = [this.marks[1], mark];
    const overflow =
      mark.received - before.received >= this.queue.limit || mark.closures !== before.closures;
    return { overflow };
  }

  /**
   * The folders events named since the last call: `changed` to read again, and among them
   * `renamed`, named by an event in their parent, to watch again before they are read.
   */
  takeChanged(): { changed: Set<string>; renamed: Set<string> } {
    const taken = { changed: this.changed, renamed: this.renamed };
    this.changed = new Set();
    this.renamed = new Set();
    return taken;
  }

  /** Mark `folder` to be read again at the next scan, with a fresh watcher and its tree. */
  markRenamed(folder: string): void {
    this.changed.add(folder);
    this.renamed.add(folder);
  }

  /** A scan begins: the flood count starts again. */
  startScan(): void {
    this.sinceScan = 0;
  }

  /** Close every watcher. */
  close(): void {
    const all = [...this.watchers.values(), ...this.retired];
    this.watchers.clear();
    this.retired = [];
    this.unwatched.clear();
    this.closeAll(all);
  }

  private closeRetired(): void {
    const retired = this.retired;
    this.retired = [];
    this.closeAll(retired);
  }

  /** Retired watchers count against the budget until closed: they hold memory until then. */
  private closeAll(watchers: FolderWatcher[]): void {
    if (watchers.length === 0) return;
    this.queue.closures += 1;
    for (const watcher of watchers) watcher.close();
    this.queue.live -= watchers.length;
  }
}
