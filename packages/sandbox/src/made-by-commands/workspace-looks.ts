import path from "node:path";
import type { WorkspaceLook } from "../os/command-wrapper.js";
import { type CurrentProtectionOptions, currentProtection } from "../os/host-facts.js";
import { pathState } from "../policy/path-state.js";
import { makeNewRepositoriesInert } from "./inert-repositories.js";
import { moveAsideAppeared } from "./moved-aside.js";
import { disarmRebaseTodos } from "./rebase-todo.js";

/** The looks of a wrapper at its workspaces, before and after their commands. */
export interface WorkspaceLooks {
  /** The git directory entries of `root` and its protected paths that are missing now. */
  look(root: string): Promise<WorkspaceLook>;
  /**
   * Move aside what appeared at the protected paths `since` found missing, make inert the
   * repositories that appeared since its walk, and (with git writes) disarm the rebase todo
   * lists: what a command, or a session's jobs, made. `protectedBefore`: what was mounted
   * read-only meanwhile (nothing there was made by a command). Returns the notes and this look;
   * without `look`, a look of the walk alone (no missing paths: for a command no session follows).
   */
  madeSince(
    root: string,
    since: WorkspaceLook,
    options?: { protectedBefore?: readonly string[]; look?: boolean },
  ): Promise<{ notes: string[]; look: WorkspaceLook }>;
}

/** The looks by the wrapper's own policy options (`root` is given to each call). */
export function workspaceLooks(
  policy: Omit<CurrentProtectionOptions, "root" | "cache" | "maxDirectories"> &
    Required<Pick<CurrentProtectionOptions, "cache" | "maxDirectories">>,
): WorkspaceLooks {
  const look = async (root: string): Promise<WorkspaceLook> => {
    const protection = await currentProtection({ ...policy, root });
    return {
      gitEntries: protection.gitEntries,
      missing: protection.paths.filter(({ state }) => state === "missing"),
    };
  };
  return {
    look,
    async madeSince(root, since, { protectedBefore, look: wanted = true } = {}) {
      const notes = moveAsideAppeared(root, since.missing);
      const after = wanted
        ? await look(root)
        : {
            gitEntries: (await policy.cache.walker(root, policy.maxDirectories).scan()).gitEntries,
            missing: [],
          };
      if (policy.gitWrites === true) {
        notes.push(...disarmRebaseTodos(root, writableGitDirectories(root, after)));
      }
      notes.push(
        ...makeNewRepositoriesInert({
          root,
          before: since.gitEntries,
          after: after.gitEntries,
          rootRepositoryMade: since.missing.some(({ path: each }) => each === `${root}/.git`),
          ...(protectedBefore === undefined ? {} : { protectedBefore }),
        }),
      );
      // Looked at again only when something was moved or made inert: the missing paths changed.
      return { notes, look: notes.length === 0 || !wanted ? after : await look(root) };
    },
  };
}

/** The `.git` folders of the workspace whose objects, refs and index commands may write. */
function writableGitDirectories(root: string, look: WorkspaceLook): string[] {
  return [path.join(root, ".git"), ...look.gitEntries].filter(
    (entry) => path.basename(entry) === ".git" && pathState(entry) === "directory",
  );
}
