import { type Dirent, readdirSync } from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { at, type Located } from "../beneath.js";
import type { WorkspaceRoot } from "../workspace-root.js";
import { type FolderEntry, holdsGitDirectoryLayout } from "./git-machinery.js";

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
