import { randomUUID } from "node:crypto";
import { lstatSync, renameSync, unlinkSync } from "node:fs";
import path from "node:path";
import { at, type HeldFolder, locate } from "../beneath.js";
import { workspaceRoot } from "../workspace-root.js";
import { readSmallFile, writeNewFile } from "./held-files.js";
import { moveAside } from "./moved-aside.js";

/** The todo list of an interactive rebase in progress, in its git directory. */
const TODO = path.join("rebase-merge", "git-rebase-todo");
/** The merge strategy a rebase in progress goes on with (`git merge-<strategy>` is run). */
const STRATEGY = path.join("rebase-merge", "strategy");
/** The options of a cherry-pick or revert in progress, its strategy among them. */
const SEQUENCER_OPTIONS = path.join("sequencer", "opts");
/** The most bytes of such a file read (a longer one is moved aside). */
const MAX_STATE_BYTES = 4 * 1024 * 1024;
/** An `exec` line of a todo list (`x` for short): git runs the rest of the line in a shell. */
const EXEC_LINE = /^[ \t]*(x|exec)([ \t]|$)/;
/** git's own merge strategies: any other name is a program git looks for (a path, even). */
const BUILT_IN_STRATEGIES = new Set(["ort", "recursive", "resolve", "octopus", "ours", "subtree"]);

/**
 * Disarm what a command can leave in the state of a rebase, cherry-pick or revert stopped half-way
 * in each of `gitDirectories` (real paths in the workspace `root`), which `git rebase --continue`
 * or `git cherry-pick --continue` on the host would run: the todo list's `exec` lines are
 * commented out, and a strategy that is not git's own (`x/../evil.sh` runs a workspace script) is
 * moved aside with the file that names it. A file that cannot be read as a small regular file (a
 * link, a FIFO, a huge one) is moved aside whole. Each change is made in its folder, held open
 * from the root. Returns one note per change, or per file that could not be looked at.
 */
export function disarmRebaseTodos(root: string, gitDirectories: readonly string[]): string[] {
  const notes: string[] = [];
  const workspace = workspaceRoot(root, root);
  const aside = (shown: string, why: string) => {
    try {
      const moved = moveAside(workspace, shown);
      if (moved !== undefined) {
        notes.push(
          `${moved.from} ${why}: pleach moved it to ${moved.to}, so that git on the host does not go on with it. Look at it before you continue what stopped.`,
        );
      }
    } catch (error) {
      notes.push(
        `${shown} ${why}, and pleach could not move it aside (${(error as Error).message}); do not run git rebase or cherry-pick --continue on the host before you looked at it.`,
      );
    }
  };
  for (const gitDirectory of gitDirectories) {
    const folder = path.relative(root, gitDirectory);
    const todo = readState(workspace, path.join(folder, TODO));
    if (todo === "unreadable") {
      aside(path.join(folder, TODO), "is a rebase todo list pleach cannot read as a small file");
    } else if (todo !== undefined) {
      let count = 0;
      const kept = todo.text.split("\n").map((line) => {
        if (!EXEC_LINE.test(line)) return line;
        count += 1;
        return `# pleach: a sandboxed command wrote this exec line: ${line}`;
      });
      if (count > 0) {
        try {
          replace(workspace, todo.folder, todo.name, kept.join("\n"));
          notes.push(
            `${path.join(folder, TODO)}, the todo list of a rebase a sandboxed command left stopped, held ${count} exec ${count === 1 ? "line" : "lines"}, which git rebase --continue on the host would run: pleach commented ${count === 1 ? "it" : "them"} out. Look at ${count === 1 ? "it" : "them"} before you continue the rebase.`,
          );
        } catch {
          aside(path.join(folder, TODO), "holds exec lines pleach could not comment out");
        }
      }
      todo.close();
    }
    for (const [file, strategyOf] of [
      [STRATEGY, (text: string) => [text.trim()]],
      [SEQUENCER_OPTIONS, sequencerStrategies],
    ] as const) {
      const state = readState(workspace, path.join(folder, file));
      if (state === undefined) continue;
      const named =
        state === "unreadable" ? undefined : strategyOf(state.text).filter((each) => each !== "");
      if (state !== "unreadable") state.close();
      if (named?.every((each) => BUILT_IN_STRATEGIES.has(each))) continue;
      aside(
        path.join(folder, file),
        named === undefined
          ? "is a merge state pleach cannot read as a small file"
          : `names a merge strategy that is not git's own (${named.join(", ")}), which git would run as a program`,
      );
    }
  }
  return notes;
}

/** The strategies a sequencer's `opts` names (`[options] strategy = ...`), any case. */
function sequencerStrategies(text: string): string[] {
  return [...text.matchAll(/^\s*strategy\s*=\s*(.*?)\s*$/gim)].map((match) =>
    (match[1] ?? "").replace(/^"(.*)"$/, "$1"),
  );
}

/**
 * The text of the state file at `shown`, held in its folder (close it after), `undefined` when
 * it is missing, or `unreadable` when it is no small regular file reached through no link.
 */
function readState(
  workspace: ReturnType<typeof workspaceRoot>,
  shown: string,
): { text: string; folder: HeldFolder; name: string; close(): void } | "unreadable" | undefined {
  let located: ReturnType<typeof locate>;
  try {
    located = locate(workspace, shown);
  } catch {
    const there = lstatSync(path.join(workspace.real, shown), { throwIfNoEntry: false });
    return there === undefined ? undefined : "unreadable";
  }
  if (located.missing.length > 0) {
    located.close();
    return undefined;
  }
  const text =
    located.relative === shown && located.target?.isFile() === true
      ? readSmallFile(workspace, located.parent, located.name, MAX_STATE_BYTES)
      : undefined;
  if (text === undefined) {
    located.close();
    return "unreadable";
  }
  return { text, folder: located.parent, name: located.name, close: () => located.close() };
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
