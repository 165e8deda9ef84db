import { accessSync, constants, type Dirent, readdirSync } from "node:fs";
import path from "node:path";
import { holdsGitDirectoryLayout } from "../git/git-machinery.js";

/** How long the search past the walk's folder limit may take before it gives up. */
const SEARCH_MS = 60_000;
/** The most folders it keeps waiting to be read (a flood of siblings): past it, it gives up. */
const MAX_PENDING = 1_000_000;

/** What a search of a tree found: as the walk counts them (`WorkspaceScan`), sorted. */
export interface SearchedTree {
  /**
   * Each `.git` entry but the top's own, and each folder holding git's layout (the top too):
   * `WorkspaceScan.gitEntries`.
   */
  gitEntries: string[];
  /** Each folder that could not be listed, or listed but not searched: `WorkspaceScan.unreadable`. */
  unreadable: string[];
}

/**
 * What lies below `top`, found by a depth-first search that keeps only the folders still to read:
 * what a command that made more folders than the walk's limit left past it, or what a folder
 * opened again holds. Links are not followed and `.git` folders not entered. `undefined` when it
 * did not finish within `ms`, or had more than {@link MAX_PENDING} folders to read at once (its
 * memory stays bounded).
 */
export function searchTree(top: string, ms = SEARCH_MS): SearchedTree | undefined {
  const deadline = Date.now() + ms;
  const found: SearchedTree = { gitEntries: [], unreadable: [] };
  const stack = [top];
  for (let folder = stack.pop(); folder !== undefined; folder = stack.pop()) {
    if (Date.now() > deadline || stack.length > MAX_PENDING) return undefined;
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
      // Listed but not searchable (mode 0600, say): its subfolders cannot be read either.
      accessSync(folder, constants.X_OK);
    } catch (error) {
      // Gone (as its parent's change shows), or not listable: then what it holds is unknown.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EACCES" || code === "EPERM") found.unreadable.push(folder);
      continue;
    }
    if (holdsGitDirectoryLayout(entries)) found.gitEntries.push(folder);
    for (const entry of entries) {
      const child = path.join(folder, entry.name);
      if (entry.name === ".git") {
        if (folder !== top) found.gitEntries.push(child);
      } else if (entry.isDirectory()) {
        stack.push(child);
      }
    }
  }
  found.gitEntries.sort();
  found.unreadable.sort();
  return found;
}
