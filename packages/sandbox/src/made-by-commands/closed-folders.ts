import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
} from "node:fs";
import path from "node:path";
import { at, locate } from "../beneath.js";
import type { WorkspaceLook } from "../os/command-wrapper.js";
import { isInside, isInsideAny } from "../paths.js";
import { workspaceRoot } from "../workspace-root.js";

/** What a look or a walk found of the git directories and of the folders it could not list. */
type Seen = Pick<WorkspaceLook, "unreadable" | "gitEntries">;

/** `O_PATH`: an open that needs no permission on the folder itself, only to find it. */
const O_PATH = 0o10_000_000;
/**
 * Rounds of opening folders and looking inside them, each of which may find closed folders below:
 * one per level of a path PATH_MAX can name (each level at least one letter and a slash).
 */
const MAX_ROUNDS = 2_048;

/**
 * Open again, for their owner, the folders a command closed. A folder that cannot be listed hides
 * what it holds from the look that follows a command, so a command that makes a repository and
 * then takes the read bits off a folder above it (`chmod 000`) would leave that repository live,
 * for the host's git to run once the folder is opened. So each folder found unreadable that was
 * not among `before.unreadable` (those unreadable when the command started, protected whole
 * meanwhile, and what lies inside them), and each git directory not among `before.gitEntries` that
 * cannot be listed (the walk does not enter one, and it could not be made inert), gets its owner's
 * read, write and search bits back when the caller owns it (a command runs as the caller, so it
 * owns what it made and what it could close). The folder is held open from the root of `top` and
 * changed through that descriptor, never by its name, so a folder swapped for a link meanwhile is
 * not followed. `first` is what the look found when the command ended; `again` looks anew once a
 * folder was opened, round by round, for a closed folder below an opened one. Linux only
 * (`/proc/self/fd`); elsewhere a closed folder stays protected whole. Returns a note of the
 * folders opened, one of those that could not be, and the last of what was found.
 */
export async function reopenClosedFolders<Found extends Seen>(
  top: string,
  before: Seen,
  first: Found,
  again: () => Promise<Found>,
): Promise<{ notes: string[]; found: Found }> {
  if (process.platform !== "linux") return { notes: [], found: first };
  const closedBefore = new Set(before.unreadable);
  const gitBefore = new Set(before.gitEntries);
  const tried = new Set<string>();
  const opened: string[] = [];
  const failed: string[] = [];
  let complete = false;
  let found = first;
  for (let round = 0; round < MAX_ROUNDS && !complete; round += 1) {
    if (round > 0) found = await again();
    // The walk does not enter a git directory: a new one closed is found by trying it.
    const closedGit = found.gitEntries.filter((entry) => !gitBefore.has(entry) && !listable(entry));
    const closed = [...found.unreadable, ...closedGit].filter(
      (folder) =>
        isInside(top, folder) &&
        folder !== top &&
        !tried.has(folder) &&
        !isInsideAny(closedBefore, folder),
    );
    complete = closed.length === 0;
    for (const folder of closed) {
      // Tried once: one that cannot be opened stays protected whole, as before.
      tried.add(folder);
      const shown = path.relative(top, folder);
      try {
        const mode = reopen(top, shown);
        if (mode !== undefined) opened.push(`${shown} (mode ${mode.toString(8).padStart(3, "0")})`);
      } catch (error) {
        failed.push(`${shown} (${(error as Error).message})`);
      }
    }
  }
  const notes: string[] = [];
  if (opened.length > 0) {
    notes.push(
      `${listed(opened)} could not be read, by a mode a sandboxed command set: pleach gave ${opened.length === 1 ? "its" : "their"} owner read, write and search permission back when the command ended, to look for repositories made inside.`,
    );
  }
  if (failed.length > 0 || !complete) {
    notes.push(
      `${failed.length > 0 ? `${listed(failed)} could not be read and pleach could not open ${failed.length === 1 ? "it" : "them"} again` : "pleach found closed folders below closed folders past the deepest path it can name"}: what is closed stays read-only for commands; do not restore its permissions before you looked at what it holds.`,
    );
  }
  return { notes, found };
}

/** Up to five of `items`, and how many more. */
function listed(items: readonly string[]): string {
  const shown = items.slice(0, 5).join(", ");
  return items.length > 5
    ? `${shown} and ${(items.length - 5).toLocaleString("en-US")} more folders`
    : shown;
}

/** Whether `folder` is a folder the caller can list and search (by its name: only to choose). */
function listable(folder: string): boolean {
  try {
    if (!lstatSync(folder).isDirectory()) return true;
    accessSync(folder, constants.R_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Give the caller's folder `relative` (in `top`) its owner's bits back; the mode it had, or
 * `undefined` when it is gone, no longer a folder or someone else's.
 */
function reopen(top: string, relative: string): number | undefined {
  const root = workspaceRoot(top, top);
  const located = locate(root, relative);
  try {
    // Not through a link made meanwhile: only the folder the look found is changed.
    if (located.relative !== relative || located.target?.isDirectory() !== true) return undefined;
    const fd = openSync(
      at(root, located.parent, located.name),
      O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW,
    );
    try {
      const info = fstatSync(fd);
      if (!info.isDirectory() || info.uid !== process.getuid?.()) return undefined;
      const mode = info.mode & 0o7777;
      // An O_PATH descriptor takes no fchmod; its /proc entry names the very folder held.
      chmodSync(`/proc/self/fd/${fd}`, mode | 0o700);
      return mode;
    } finally {
      closeSync(fd);
    }
  } finally {
    located.close();
  }
}
