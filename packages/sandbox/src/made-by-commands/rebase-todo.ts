import { randomUUID } from "node:crypto";
import { lstatSync, renameSync, unlinkSync } from "node:fs";
import path from "node:path";
import { at, type HeldFolder, locate } from "../beneath.js";
import { workspaceRoot } from "../workspace-root.js";
import { readSmallFile, writeNewFile } from "./held-files.js";

/** The todo list of an interactive rebase in progress, in its git directory. */
const TODO = path.join("rebase-merge", "git-rebase-todo");
/** The most bytes of a todo list read (a longer one is left alone, and said so). */
const MAX_TODO_BYTES = 4 * 1024 * 1024;
/** An `exec` line of a todo list (`x` for short): git runs the rest of the line in a shell. */
const EXEC_LINE = /^[ \t]*(x|exec)([ \t]|$)/;

/**
 * Comment out the `exec` lines of the rebase todo list in each of `gitDirectories` (real paths in
 * the workspace `root`): with git writes, a command can leave a rebase stopped half-way whose todo
 * list runs commands, which `git rebase --continue` on the host would run there. Each list is
 * rewritten in its folder, held open from the root (a link on the way is refused), through a new
 * file renamed over the old. Returns one note per list changed, or that could not be read.
 */
export function disarmRebaseTodos(root: string, gitDirectories: readonly string[]): string[] {
  const notes: string[] = [];
  const workspace = workspaceRoot(root, root);
  for (const gitDirectory of gitDirectories) {
    const shown = path.join(path.relative(root, gitDirectory), TODO);
    let located: ReturnType<typeof locate>;
    try {
      located = locate(workspace, shown);
    } catch (error) {
      // A link on the way that leads out, or loops: what git would read cannot be looked at.
      if (lstatSync(path.join(root, shown), { throwIfNoEntry: false }) !== undefined) {
        notes.push(
          `pleach could not look for exec lines in ${shown} (${(error as Error).message}); do not run git rebase --continue on the host before you looked at it.`,
        );
      }
      continue;
    }
    try {
      if (located.missing.length > 0 || located.target?.isFile() !== true) continue;
      if (located.relative !== shown) {
        notes.push(
          `${shown} is reached through a link, so pleach did not look for exec lines in it; do not run git rebase --continue on the host before you looked at it.`,
        );
        continue;
      }
      const text = readSmallFile(workspace, located.parent, located.name, MAX_TODO_BYTES);
      if (text === undefined) {
        notes.push(
          `${shown} is too large for pleach to look for exec lines in it; do not run git rebase --continue on the host before you looked at it.`,
        );
        continue;
      }
      const lines = text.split("\n");
      let count = 0;
      const kept = lines.map((line) => {
        if (!EXEC_LINE.test(line)) return line;
        count += 1;
        return `# pleach: a sandboxed command wrote this exec line: ${line}`;
      });
      if (count === 0) continue;
      replace(workspace, located.parent, located.name, kept.join("\n"));
      notes.push(
        `${shown}, the todo list of a rebase a sandboxed command left stopped, held ${count} exec ${count === 1 ? "line" : "lines"}, which git rebase --continue on the host would run: pleach commented ${count === 1 ? "it" : "them"} out. Look at ${count === 1 ? "it" : "them"} before you continue the rebase.`,
      );
    } catch (error) {
      notes.push(
        `pleach could not look for exec lines in ${shown} (${(error as Error).message}); do not run git rebase --continue on the host before you looked at it.`,
      );
    } finally {
      located.close();
    }
  }
  return notes;
}

/** Put `text` in place of `name` in the held folder: a new file, renamed over the old one. */
function replace(
  workspace: ReturnType<typeof workspaceRoot>,
  folder: HeldFolder,
  name: string,
  text: string,
): void {
  const temporary = `.${name}.pleach-${randomUUID()}`;
  writeNewFile(workspace, folder, temporary, text);
  try {
    renameSync(at(workspace, folder, temporary), at(workspace, folder, name));
  } catch (error) {
    unlinkSync(at(workspace, folder, temporary));
    throw error;
  }
}
