import { type Dirent, readdirSync } from "node:fs";
import path from "node:path";
import { holdsGitDirectoryLayout } from "../git/git-machinery.js";

/** How long the search past the walk's folder limit may take before it gives up. */
const SEARCH_MS = 60_000;
/** The most folders it keeps waiting to be read (a flood of siblings): past it, it gives up. */
const MAX_PENDING = 1_000_000;

/**
 * Every git directory entry below `top`, as the walk counts them (`WorkspaceScan.gitEntries`:
 * each `.git` entry but the top's own, and each folder holding git's layout, the top too), sorted,
 * found by a depth-first search that keeps only the folders still to read: what a command that
 * made more folders than the walk's limit left past it. Links are not followed and `.git` folders
 * not entered. `undefined` when it did not finish within `ms`, or had more than
 * {@link MAX_PENDING} folders to read at once (its memory stays bounded).
 */
export function gitEntriesPastTheLimit(top: string, ms = SEARCH_MS): string[] | undefined {
  const deadline = Date.now() + ms;
  const found: string[] = [];
  const stack = [top];
  for (let folder = stack.pop(); folder !== undefined; folder = stack.pop()) {
    if (Date.now() > deadline || stack.length > MAX_PENDING) return undefined;
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      // Gone, or not listable: what the walk found of it stands (its unreadable folders are
      // protected whole).
      continue;
    }
    if (holdsGitDirectoryLayout(entries)) found.push(folder);
    for (const entry of entries) {
      const child = path.join(folder, entry.name);
      if (entry.name === ".git") {
        if (folder !== top) found.push(child);
      } else if (entry.isDirectory()) {
        stack.push(child);
      }
    }
  }
  return found.sort();
}
