import {
  closeSync,
  type FSWatcher,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  unlinkSync,
  watch,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { sweepStaleFolders } from "./stale-folders.js";

/** A watcher on one folder, as {@link WatchFolder} returns it. */
export interface FolderWatcher {
  close(): void;
}

/** What a {@link WatchFolder} reports. */
export interface FolderWatchListener {
  /** An event in the folder: `name` is the entry it is about, `null` for the folder itself. */
  change(name: string | null): void;
  /** The watcher failed and closed itself: events for it may have been lost. */
  error(): void;
}

/**
 * Starts watching a folder, throwing as `fs.watch` does (`ENOSPC` at the watch limit, `EMFILE`
 * without an inotify instance, `EACCES`, `ENOENT`...). Tests inject one to simulate failures.
 */
export type WatchFolder = (folder: string, listener: FolderWatchListener) => FolderWatcher;

/** `fs.watch`: one inotify watch per folder, all on the one inotify instance of this thread's loop. */
export const watchFolder: WatchFolder = (folder, listener) => {
  const watcher: FSWatcher = watch(folder, { persistent: false }, (_event, name) =>
    listener.change(typeof name === "string" ? name : null),
  );
  watcher.on("error", () => listener.error());
  return watcher;
};

/** Where a barrier found the queue: every count up to that point has been dispatched. */
export interface QueueMark {
  /** Events dispatched to this thread's watchers so far. */
  received: number;
  /** Times watchers were closed so far (events queued for them are dropped unseen). */
  closures: number;
}

/** The start of the barrier folders' names, followed by the process id. */
const BARRIER_PREFIX = "pleach-barrier-";

/** How often a barrier whose marker has not arrived makes another. */
const BARRIER_RETRY_MS = 100;

/** Most watchers a process keeps: about 0.9 KB of memory each, and a share of the user's limit. */
const MOST_WATCHERS = 120_000;

/**
 * The inotify queue of this thread, as libuv delivers it: one queue, in order, whose overflow
 * (`IN_Q_OVERFLOW`) libuv drops silently. It counts every event its watchers receive, so that an
 * overflow can be inferred: the kernel overflows only when `max_queued_events` events wait at
 * once, and all of those are delivered, so a span between two barriers in which fewer arrived
 * held no overflow. The count misses only events of watchers closed while they were queued, so
 * each close is counted too ({@link QueueMark.closures}).
 */
class InotifyQueue {
  received = 0;
  closures = 0;
  /** Watchers alive in this thread, against {@link budget}. */
  live = 0;
  readonly limit = readLimit("max_queued_events", 16_384);
  /**
   * The most watchers this thread sets: {@link MOST_WATCHERS}, and three quarters of the user's
   * limit, leaving the rest to the user's other tools (editors, bundlers).
   */
  readonly budget = Math.min(
    MOST_WATCHERS,
    Math.floor((readLimit("max_user_watches", 8_192) * 3) / 4),
  );
  private folder: string | undefined;
  private markerWatcher: FSWatcher | undefined;
  private sequence = 0;
  private readonly waiting = new Set<{
    markers: Set<string>;
    since: number;
    resolve: (mark: QueueMark) => void;
    reject: (error: unknown) => void;
  }>();

  /** Count one event (every watcher's listener calls this first). */
  count(): void {
    this.received += 1;
    for (const barrier of this.waiting) {
      // A marker made while the queue was full was dropped; so many events since say it may be.
      if (this.received - barrier.since >= this.limit) this.mark(barrier);
    }
  }

  /**
   * Resolves once every event queued before the call has been dispatched: a marker file is made
   * and removed in a private folder watched by this thread, and inotify keeps one queue in order.
   */
  barrier(): Promise<QueueMark> {
    let retry: NodeJS.Timeout | undefined;
    return new Promise<QueueMark>((resolve, reject) => {
      const barrier = { markers: new Set<string>(), since: this.received, resolve, reject };
      this.waiting.add(barrier);
      this.mark(barrier);
      // A marker made while the queue was full is dropped, and when the watchers that filled it
      // were closed no count says so: another marker, now and then, until one arrives (any marker
      // made after the call is a barrier). The timer also keeps the process alive meanwhile.
      retry = setInterval(() => this.mark(barrier), BARRIER_RETRY_MS);
    }).finally(() => clearInterval(retry));
  }

  private mark(barrier: { markers: Set<string>; since: number; reject: (error: unknown) => void }) {
    try {
      this.makeMarker(barrier);
    } catch {
      // The folder was removed (a cleaner of the temporary folder, say): make another, once.
      this.dropFolder();
      try {
        this.makeMarker(barrier);
      } catch (error) {
        this.waiting.delete(barrier as never);
        barrier.reject(error);
      }
    }
  }

  private makeMarker(barrier: { markers: Set<string>; since: number }): void {
    const folder = this.markerFolder();
    this.sequence += 1;
    const name = String(this.sequence);
    barrier.markers.add(name);
    barrier.since = this.received;
    const marker = path.join(folder, name);
    closeSync(openSync(marker, "wx", 0o600));
    unlinkSync(marker);
  }

  private dropFolder(): void {
    // Its queued events go uncounted, as a closed watcher's do.
    if (this.markerWatcher !== undefined) this.closures += 1;
    this.markerWatcher?.close();
    this.markerWatcher = undefined;
    if (this.folder !== undefined) rmSync(this.folder, { recursive: true, force: true });
    this.folder = undefined;
  }

  private markerFolder(): string {
    if (this.folder !== undefined) return this.folder;
    void sweepStaleFolders(BARRIER_PREFIX);
    const folder = mkdtempSync(path.join(os.tmpdir(), `${BARRIER_PREFIX}${process.pid}-`));
    process.once("exit", () => rmSync(folder, { recursive: true, force: true }));
    const watcher = watch(folder, { persistent: false }, (_event, name) => {
      this.count();
      for (const barrier of this.waiting) {
        if (typeof name === "string" && barrier.markers.has(name)) {
          this.waiting.delete(barrier);
          barrier.resolve({ received: this.received, closures: this.closures });
        }
      }
    });
    watcher.on("error", () => {
      this.dropFolder();
      for (const barrier of this.waiting) barrier.reject(new Error("the barrier watcher failed"));
      this.waiting.clear();
    });
    this.markerWatcher = watcher;
    this.folder = folder;
    return folder;
  }
}

function readLimit(name: string, fallback: number): number {
  try {
    const value = Number(readFileSync(`/proc/sys/fs/inotify/${name}`, "utf8"));
    return Number.isSafeInteger(value) && value > 0 ? value : fallback;
  } catch {
    return fallback;
  }
}

let queue: InotifyQueue | undefined;

/** This thread's {@link InotifyQueue} (made on first use). */
export function inotifyQueue(): InotifyQueue {
  queue ??= new InotifyQueue();
  return queue;
}
