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
export function completesGitDirectory(
  entries: readonly FolderEntry[],
  added: string,
  addedIsFolder: boolean,
): boolean {
  if (holdsGitDirectoryLayout(entries)) return false;
  return holdsGitDirectoryLayout([...entries, { name: added, isDirectory: () => addedIsFolder }]);
}
