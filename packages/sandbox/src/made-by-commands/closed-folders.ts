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
import { gitDirectoriesOf } from "../git/git-machinery.js";
import type { WorkspaceLook } from "../os/command-wrapper.js";
import { isInside, isInsideAny } from "../paths.js";
import { workspaceRoot } from "../workspace-root.js";
import { type SearchedTree, searchTree } from "./past-the-limit.js";

/** What a look or a walk found of the git directories and of the folders it could not list. */
type Seen = Pick<WorkspaceLook, "unreadable" | "gitEntries">;

/** `O_PATH`: an open that needs no permission on the folder itself, only to find it. */
const O_PATH = 0o10_000_000;
/**
 * Looks of the whole folder after opening some: a folder closed below an opened one is found by
 * a search of the opened one, so a look again only follows git's pointers (a `.git` file to its
 * gitdir, a gitdir to its common dir) into folders that were closed, one step each.
 */
const MAX_LOOKS = 4;
/** How long the opening and the searches below what was opened may take, all told. */
const BUDGET_MS = 60_000;

/**
 * Open again, for their owner, the folders a command closed. A folder that cannot be listed hides
 * what it holds from the look that follows a command, so a command that makes a repository and
 * then takes the read bits off a folder above it (`chmod 000`) would leave that repository live,
 * for the host's git to run once the folder is opened. So each folder found unreadable that was
 * not among `before.unreadable` (those unreadable when the command started, protected whole
 * meanwhile, and what lies inside them), the top itself too, and each git directory of a new git
 * entry that cannot be listed (its gitdir and common dir, which the walk does not enter), with
 * the folders above it, gets its owner's read, write and search bits back when the caller owns it
 * (a command runs as the caller, so it owns what it made and what it could close). Each folder is
 * held open from the top and changed through that descriptor, never by its name, so a folder
 * swapped for a link meanwhile is not followed.
 *
 * `first` is what the look found when the command ended. What each opened folder holds is
 * searched at once (`searchTree`), and what is closed in it opened in turn; then `again` looks
 * anew, at most {@link MAX_LOOKS} times, all within {@link BUDGET_MS}. A folder found closed again
 * after it was opened (a job closing it meanwhile), or not opened in time, is named in a note
 * that warns. Linux only (`/proc/self/fd`); elsewhere a closed folder stays protected whole.
 * Returns the notes and the last of what was found.
 */
export async function reopenClosedFolders<Found extends Seen>(
  top: string,
  before: Seen,
  first: Found,
  again: () => Promise<Found>,
): Promise<{ notes: string[]; found: Found }> {
  if (process.platform !== "linux") return { notes: [], found: first };
  const deadline = Date.now() + BUDGET_MS;
  const closedBefore = new Set(before.unreadable);
  const gitBefore = new Set(before.gitEntries);
  const tried = new Set<string>();
  const opened = new Map<string, number>();
  const failed = new Map<string, string>();
  let outOfTime = false;
  /** The folders of `seen` to open: closed since the command started, not tried yet. */
  const toOpen = (seen: Seen): string[] => {
    const closed = [...seen.unreadable, ...closedGitDirectories(top, seen.gitEntries, gitBefore)];
    const wanted: string[] = [];
    for (const folder of new Set(closed)) {
      if (!isInside(top, folder) || isInsideAny(closedBefore, folder)) continue;
      if (!tried.has(folder)) wanted.push(folder);
      else if (opened.has(folder)) failed.set(folder, "closed again after pleach opened it");
    }
    return wanted;
  };
  let found = first;
  let pending = toOpen(found);
  for (let look = 0; pending.length > 0 && look < MAX_LOOKS && !outOfTime; look += 1) {
    // Shallowest first: a folder is reached through the folders above it.
    const queue = pending.sort((left, right) => depth(left) - depth(right));
    const openedBefore = opened.size;
    for (let next = 0; next < queue.length; next += 1) {
      const folder = queue[next] as string;
      if (Date.now() > deadline) {
        outOfTime = true;
        break;
      }
      if (tried.has(folder)) continue;
      tried.add(folder);
      let mode: number | undefined;
      try {
        mode = reopen(top, folder);
      } catch (error) {
        failed.set(folder, (error as Error).message);
        continue;
      }
      if (mode === undefined) continue;
      opened.set(folder, mode);
      // What it holds, searched now rather than by a look of the whole folder per level (its own
      // `.git` too, which a search leaves to the folder above).
      const below: SearchedTree | undefined = searchTree(folder, deadline - Date.now());
      if (below === undefined) {
        outOfTime = true;
        break;
      }
      below.gitEntries.push(path.join(folder, ".git"));
      queue.push(...toOpen(below));
    }
    if (opened.size === openedBefore || outOfTime) break;
    found = await again();
    pending = toOpen(found);
  }
  const notes: string[] = [];
  if (opened.size > 0) {
    const modes = [...opened].map(
      ([folder, mode]) => `${shownOf(top, folder)} (mode ${mode.toString(8).padStart(3, "0")})`,
    );
    notes.push(
      `${listed(modes)} could not be read, by a mode a sandboxed command set: pleach gave ${opened.size === 1 ? "its" : "their"} owner read, write and search permission back when the command ended, to look for repositories made inside.`,
    );
  }
  const left = outOfTime || pending.some((folder) => !tried.has(folder));
  if (failed.size > 0 || left) {
    const reasons = [...failed].map(([folder, why]) => `${shownOf(top, folder)} (${why})`);
    const parts = [
      ...(failed.size > 0
        ? [
            `${listed(reasons)} could not be read and pleach could not open ${failed.size === 1 ? "it" : "them"} for good`,
          ]
        : []),
      ...(left
        ? [
            "pleach could not open every folder a sandboxed command closed in time (it made too many, or kept making them)",
          ]
        : []),
    ];
    notes.push(
      `${parts.join("; ")}: a repository made inside may be live. Do not restore their permissions or run git there before you looked at what they hold.`,
    );
  }
  return { notes, found };
}

/**
 * The folders of the git directories of `gitEntries` (not among `gitBefore`) that cannot be
 * listed, and the closed folders above each inside `top`: the walk enters none of them.
 */
function closedGitDirectories(
  top: string,
  gitEntries: readonly string[],
  gitBefore: ReadonlySet<string>,
): string[] {
  const closed: string[] = [];
  for (const entry of gitEntries) {
    if (gitBefore.has(entry)) continue;
    let folders = [entry];
    try {
      folders = [entry, ...gitDirectoriesOf(entry, (each) => each).folders];
    } catch {
      // Not to be looked at (a folder above it closed): that folder is found below.
    }
    for (const folder of folders) {
      if (!isInside(top, folder) || listable(folder)) continue;
      for (let above = folder; above !== top && isInside(top, above); above = path.dirname(above)) {
        if (!listable(above)) closed.push(above);
      }
    }
  }
  return closed;
}

/** `folder` as a note shows it: relative to `top`, or the top's own path. */
function shownOf(top: string, folder: string): string {
  return folder === top ? top : path.relative(top, folder);
}

function depth(folder: string): number {
  return folder.split(path.sep).length;
}

/** Up to five of `items`, and how many more. */
function listed(items: readonly string[]): string {
  const shown = items.slice(0, 5).join(", ");
  return items.length > 5
    ? `${shown} and ${(items.length - 5).toLocaleString("en-US")} more folders`
    : shown;
}

/**
 * Whether `folder` is a folder the caller can list and search, or no folder; `false` when it cannot
 * even be looked at (a folder above it is closed). By its name: only to choose what to open.
 */
function listable(folder: string): boolean {
  try {
    if (lstatSync(folder, { throwIfNoEntry: false })?.isDirectory() !== true) return true;
    accessSync(folder, constants.R_OK | constants.X_OK);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOTDIR";
  }
}

/**
 * Give the caller's `folder` (in `top`, or the top itself) its owner's bits back; the mode it had,
 * or `undefined` when it is gone, no longer a folder or someone else's.
 */
function reopen(top: string, folder: string): number | undefined {
  const root = workspaceRoot(top, top);
  if (folder === top) {
    // The top cannot be renamed by a command (it is where the sandbox is mounted): it is opened
    // by its path, and must still be the folder just looked at.
    return changeOwnerBits(top, (info) => info.dev === root.device && info.ino === root.inode);
  }
  const relative = path.relative(top, folder);
  const located = locate(root, relative);
  try {
    // Not through a link made meanwhile: only the folder the look found is changed.
    if (located.relative !== relative || located.target?.isDirectory() !== true) return undefined;
    return changeOwnerBits(at(root, located.parent, located.name), () => true);
  } finally {
    located.close();
  }
}

/** Open `entry` (never through a final link) and add the owner's bits; the mode it had. */
function changeOwnerBits(
  entry: string,
  same: (info: ReturnType<typeof fstatSync>) => boolean,
): number | undefined {
  const fd = openSync(entry, O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const info = fstatSync(fd);
    if (!info.isDirectory() || info.uid !== process.getuid?.() || !same(info)) return undefined;
    const mode = info.mode & 0o7777;
    // An O_PATH descriptor takes no fchmod; its /proc entry names the very folder held.
    chmodSync(`/proc/self/fd/${fd}`, mode | 0o700);
    return mode;
  } finally {
    closeSync(fd);
  }
}
