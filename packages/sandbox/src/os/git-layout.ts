import { type Dirent, readdirSync } from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { at, type Located } from "../beneath.js";
import type { WorkspaceRoot } from "../workspace-root.js";

/** An entry of a folder, as `readdir` with file types gives it. */
interface FolderEntry {
  name: string;
  isDirectory(): boolean;
}

/**
 * Whether a folder holding `entries` is one git takes for a git directory, by git's own test
 * (setup.c, `is_git_directory`): a `HEAD`, and `objects` and `refs` (or a `commondir` naming where
 * they are). Git looks at a folder itself before its parents, and `safe.bareRepository` lets it
 * use such a folder by default, so its name does not matter. Looser than git (any type, `HEAD`
 * unread): a folder that only looks like one is protected too, never the other way round.
 */
export function holdsGitDirectoryLayout(entries: Iterable<FolderEntry>): boolean {
  const names = new Set<string>();
  for (const entry of entries) {
    if (entry.name === "HEAD" && entry.isDirectory()) continue;
    names.add(entry.name);
  }
  return (
    names.has("HEAD") && (names.has("commondir") || (names.has("objects") && names.has("refs")))
  );
}

/**
 * Whether adding the entry `added` (a folder when `addedIsFolder`) to a folder holding `entries`
 * makes it a git directory ({@link holdsGitDirectoryLayout}) that it was not.
 */
function completesGitDirectory(
  entries: readonly FolderEntry[],
  added: string,
  addedIsFolder: boolean,
): boolean {
  if (holdsGitDirectoryLayout(entries)) return false;
  return holdsGitDirectoryLayout([...entries, { name: added, isDirectory: () => addedIsFolder }]);
}

/**
 * Throw `PROTECTED_PATH` when the write would make the folder it adds an entry to a git directory
 * (`HEAD` beside `objects/` and `refs/`, say): git would then run the config a write before
 * planted there, which a repository's machinery never may be.
 */
export function refuseGitDirectoryWrite(root: WorkspaceRoot, located: Located): void {
  const [added] = located.missing;
  if (added === undefined) return;
  let entries: Dirent[];
  try {
    entries = readdirSync(at(root, located.parent, ""), { withFileTypes: true });
  } catch {
    // A folder this process cannot list it cannot write in either: the write fails by itself.
    return;
  }
  if (!completesGitDirectory(entries, added, located.missing.length > 1)) return;
  const components = located.relative.split(path.sep);
  const folder = components.slice(0, components.length - located.missing.length).join(path.sep);
  const rule = `it would make ${folder === "" ? "the workspace root" : folder} a git directory (HEAD, objects and refs): git would then run what its config says`;
  throw new ToolError("PROTECTED_PATH", `refusing to write ${located.requested}: ${rule}`, {
    details: { rule, path: located.relative },
  });
}
