import { lstatSync } from "node:fs";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { type FolderListing, FolderReader, RECENT_CHANGE_MS } from "./folder-reader.js";
import { FOLDERS_PER_TURN, FolderTree } from "./folder-tree.js";
import { FolderWatches, WatchesExhausted } from "./folder-watches.js";
import { inotifyQueue, watchFolder as inotifyWatch, type WatchFolder } from "./inotify-queue.js";

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
  /** How many folders were read this time; the others were vouched for by events or stamps. */
  listed: number;
  /**
   * How this scan knew which folders to read again: `events` (inotify watchers, Linux),
   * `stamps` (one `lstat` per folder), or `walk` (the whole tree was read).
   */
  tracking: "events" | "stamps" | "walk";
  /** Why changes are not watched by events, when they are not. */
  trackingNote?: string;
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
  /**
   * Whether to watch the tree's folders for changes (inotify, Linux only) rather than `lstat`
   * every folder on every scan.
   * @default true
   */
  watch?: boolean;
  /** How a folder is watched; tests inject failures. @default `fs.watch` */
  watchFolder?: WatchFolder;
}

/** Pending folders each scan watches itself rather than leave to the background (tens of ms). */
const SETUP_IN_SCAN = 4_096;

/** How long after a walk the watchers' setup starts in the background. */
const SETUP_DELAY_MS = 1_000;

/** Searches a workspace tree for nested `.git` entries and sockets, reusing what it found before. */
export interface WorkspaceWalker {
  /**
   * The tree as it is now: every change completed before this call is seen. Calls are serialized;
   * concurrent callers share a scan that starts after all of them arrived.
   */
  scan(): Promise<WorkspaceScan>;
  /** Stop watching the tree (a later scan searches it again). */
  close(): void;
}

/**
 * A walker over `root`. The first scan reads every folder (breadth first, never following
 * symbolic links nor entering `.git`, stopping at `maxDirectories`). Later scans read again only
 * the folders that may have changed, found one of two ways:
 *
 * - **Events** (Linux): after the first scan, each folder gets an inotify watcher (in the
 *   background, breadth first) and is checked by its stamp once (below); from then on a scan
 *   first waits for a barrier (a marker made in a private watched folder: inotify delivers one
 *   queue in order, so every event of a change completed before the scan has arrived) and reads
 *   the folders that events named. A folder is watched before it is read, so a change in it is in
 *   its listing or in an event. `fs.watch` follows symbolic links, so a watcher may have been set
 *   through a path swapped for a moment; the swap renames an entry in a watched parent, and a
 *   folder named by an event in its parent (or whose stamp moved while its watcher was set) is
 *   read with its whole subtree and fresh watchers. If the events since the barrier before the
 *   last could have overflowed the queue (as many as `max_queued_events`: libuv drops the
 *   overflow notice silently), or a watcher was closed meanwhile (libuv drops its queued events),
 *   the scan checks every stamp. So many events within one scan close the walk's watchers for a
 *   while (libuv reads the queue until it is empty: a command could keep this thread busy).
 * - **Stamps**: each folder found before is `lstat`ed and read again when its device, inode,
 *   change or modification time differ, when it changed within the last `recentChangeMs`, or
 *   when it lives on an untrusted file system. A folder's change time moves with every entry
 *   created, removed or renamed in it, and a command cannot set it back (`touch -d` sets it to
 *   now), so a `.git` or socket made anywhere in the tree is found by the next scan. Used where
 *   watchers cannot be had: not Linux, `watch: false`, the watch limit or this process's budget
 *   reached, a workspace on a network or FUSE file system, a search cut at the folder limit.
 */
export function createWorkspaceWalker({
  root,
  maxDirectories,
  recentChangeMs = RECENT_CHANGE_MS,
  watch = true,
  watchFolder = inotifyWatch,
}: WorkspaceWalkerOptions): WorkspaceWalker {
  const reader = new FolderReader(recentChangeMs);
  /** Why events are off for good, when they are. */
  let disabled: string | undefined =
    process.platform !== "linux"
      ? "inotify is Linux's"
      : watch
        ? undefined
        : "watching is turned off";
  let watches: FolderWatches | undefined;
  /** Watchers are set and the listings checked: events can be trusted. */
  let watching = false;
  /** Known folders still to watch and check (breadth first, so parents before children). */
  let pending: string[] = [];
  let pendingAt = 0;
  /** Floods of events so far, and how many scans watchers stay off after the last. */
  let floods = 0;
  let pausedScans = 0;
  let note: string | undefined = disabled;
  let summary: Omit<WorkspaceScan, "listed" | "tracking" | "trackingNote"> | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let queued: Promise<WorkspaceScan> | undefined;
  let scanning = false;
  let background: NodeJS.Timeout | undefined;

  const tree = new FolderTree(root, maxDirectories, {
    read(folder) {
      // Watch before reading: a change is then in the listing or in an event.
      if (watches !== undefined) watchOrStop(folder);
      const listing = reader.read(folder);
      if (
        watches !== undefined &&
        listing !== undefined &&
        !reader.trusts(listing.device, folder)
      ) {
        // Changes made by other machines reach no watcher here: read it on every scan.
        watches.forget(folder);
        watches.unwatched.add(folder);
      }
      return listing;
    },
    forget: (folder) => watches?.forget(folder),
    reset: () => stopWatching(),
  });

  function stopWatching(reason?: string): void {
    watches?.close();
    watches = undefined;
    watching = false;
    pending = [];
    pendingAt = 0;
    if (background !== undefined) clearTimeout(background);
    background = undefined;
    note = reason ?? disabled;
  }

  function watchOrStop(folder: string): void {
    try {
      watches?.watch(folder);
    } catch (error) {
      if (!(error instanceof WatchesExhausted)) throw error;
      disabled = error.message;
      stopWatching(disabled);
    }
  }

  /**
   * A command made events faster than they can be handled: close the watchers (libuv then drops
   * the rest unread) and use stamps for a while, longer after each flood.
   */
  function flooded(): void {
    floods += 1;
    pausedScans = 2 ** Math.min(floods, 6);
    stopWatching("paused after a flood of events");
  }

  /** Watch the tree if it can be, in the background (a scan finishes a small remainder itself). */
  function startWatching(): void {
    if (disabled !== undefined) return;
    if (pausedScans > 0) {
      pausedScans -= 1;
      note = "paused after a flood of events";
      return;
    }
    note = unwatchable();
    if (note !== undefined) return;
    watches = new FolderWatches((folder) => tree.folders.has(folder), watchFolder, flooded);
    pending = [...tree.folders.keys()];
    pendingAt = 0;
    note = "setting up watchers";
    // Not while the command of the call that walked runs: both would compete for the CPU.
    scheduleBackground(SETUP_DELAY_MS);
  }

  /** Why the tree as it is now cannot be watched, if it cannot. */
  function unwatchable(): string | undefined {
    if (tree.truncated) return "the search stopped at the folder limit";
    const rootListing = tree.folders.get(root);
    if (rootListing === undefined || !reader.trusts(rootListing.device, root)) {
      return "the workspace's file system may not report every change";
    }
    const left = inotifyQueue().budget - inotifyQueue().live;
    if (tree.folders.size > left) {
      return `more folders than the ${left.toLocaleString("en-US")} watchers left`;
    }
    return undefined;
  }

  function scheduleBackground(delayMs = 0): void {
    if (background !== undefined || watches === undefined || watching) return;
    // Unreferenced: a process with nothing else to do exits rather than finish watching.
    background = setTimeout(() => {
      background = undefined;
      if (!scanning) watchPending(FOLDERS_PER_TURN);
      scheduleBackground();
    }, delayMs).unref();
  }

  /**
   * Watch up to `count` pending folders, each then checked by its stamp: a folder whose stamp
   * still holds was not changed (nor renamed) since it was read, and any change from now on is an
   * event; one whose stamp does not hold is read again, with a fresh watcher and its subfolders,
   * at the next scan.
   */
  function watchPending(count: number): void {
    for (let done = 0; done < count && pendingAt < pending.length; done += 1) {
      const folder = pending[pendingAt++] as string;
      const listing = tree.folders.get(folder);
      if (watches === undefined || listing === undefined || watches.has(folder)) continue;
      watchOrStop(folder);
      if (!holds(folder, listing)) watches?.markRenamed(folder);
    }
    if (pendingAt >= pending.length && watches !== undefined) {
      pending = [];
      watching = true;
      note = undefined;
    }
  }

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

  /** The folders to read again by events, and those to read with fresh watchers and subtrees. */
  async function staleByEvents(
    current: FolderWatches,
  ): Promise<{ stale: string[]; renew: Set<string>; overflow: boolean } | undefined> {
    let overflow: boolean;
    try {
      ({ overflow } = await current.barrier());
    } catch (error) {
      disabled = `the barrier failed: ${(error as Error).message}`;
      stopWatching(disabled);
      return undefined;
    }
    const { changed, renamed } = current.takeChanged();
    const stale = new Set(current.unwatched);
    // Nothing above the root is watched: a root replaced by another folder is seen by its inode.
    const rootListing = tree.folders.get(root);
    const rootNow = lstatSync(root, { throwIfNoEntry: false });
    if (rootNow?.dev !== rootListing?.device || rootNow?.ino !== rootListing?.inode) {
      stale.add(root);
    }
    if (overflow) for (const folder of await staleByStamps()) stale.add(folder);
    for (const folder of changed) if (tree.folders.has(folder)) stale.add(folder);
    return { stale: [...stale], renew: renamed, overflow };
  }

  async function scanNow(): Promise<WorkspaceScan> {
    const walks = tree.walks;
    let listed: number;
    let tracking: WorkspaceScan["tracking"] = "stamps";
    watches?.startScan();
    if (walks === 0) {
      listed = await tree.walk();
    } else {
      // Each scan takes a part of the setup on itself, so that calls coming back to back (which
      // leave the background no turn) still bring the watchers up; the background does the rest.
      if (watches !== undefined && pending.length > pendingAt) watchPending(SETUP_IN_SCAN);
      const byEvents = watches !== undefined && watching ? await staleByEvents(watches) : undefined;
      // After a possible overflow every stamp was checked too.
      if (byEvents !== undefined && !byEvents.overflow) tracking = "events";
      listed = byEvents
        ? await tree.update(byEvents.stale, byEvents.renew)
        : await tree.update(await staleByStamps());
    }
    if (tree.walks !== walks) tracking = "walk";
    if (watches === undefined) startWatching();
    else scheduleBackground();
    if (tree.takeChanged()) summary = undefined;
    summary ??= summarize(root, tree.folders, tree.truncated);
    return {
      ...summary,
      gitEntries: [...summary.gitEntries],
      sockets: [...summary.sockets],
      unreadable: [...summary.unreadable],
      outOfReach: [...summary.outOfReach],
      listed,
      tracking,
      ...(note === undefined ? {} : { trackingNote: note }),
    };
  }

  return {
    scan() {
      // Joining a scan that has not started yet is sound: it will see everything done until now.
      if (queued !== undefined) return queued;
      const scan = running.then(async () => {
        queued = undefined;
        scanning = true;
        try {
          return await scanNow();
        } finally {
          scanning = false;
        }
      });
      queued = scan;
      running = scan.catch(() => {});
      return scan;
    },
    close() {
      stopWatching();
      tree.walks = 0;
    },
  };
}

function summarize(
  root: string,
  folders: ReadonlyMap<string, FolderListing>,
  truncated: boolean,
): Omit<WorkspaceScan, "listed" | "tracking" | "trackingNote"> {
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
