import path from "node:path";
import type { WorkspaceLook } from "../os/command-wrapper.js";
import {
  type CurrentProtectionOptions,
  currentProtection,
  type HostFacts,
} from "../os/host-facts.js";
import { isInside, isInsideAny } from "../paths.js";
import { pathState } from "../policy/path-state.js";
import { reopenClosedFolders } from "./closed-folders.js";
import { makeNewRepositoriesInert } from "./inert-repositories.js";
import { moveAsideAppeared } from "./moved-aside.js";
import { searchTree } from "./past-the-limit.js";
import { disarmRebaseTodos } from "./rebase-todo.js";

/** The looks of a wrapper at its workspaces, before and after their commands. */
export interface WorkspaceLooks {
  /**
   * The git directory entries of `root` and its protected paths that are missing now, and those
   * of each folder besides it that commands may write (`allowWrites`, checked now).
   */
  look(root: string): Promise<WorkspaceLook>;
  /**
   * Move aside what appeared at the protected paths `since` found missing, make inert the
   * repositories that appeared since its walk, and (with git writes) disarm the rebase todo
   * lists: what a command, or a session's jobs, made, in the workspace `root` and in the writable
   * folders `since` covers. `protectedBefore`: what was mounted read-only meanwhile (nothing there
   * was made by a command). Returns the notes and this look (of the same folders); without `look`,
   * a look of the walks alone (no missing paths: for a command no session follows).
   */
  madeSince(
    root: string,
    since: WorkspaceLook,
    options?: { protectedBefore?: readonly string[]; look?: boolean },
  ): Promise<{ notes: string[]; look: WorkspaceLook }>;
}

/** Options of {@link workspaceLooks}: the wrapper's policy options (`root` is given to each call). */
export type WorkspaceLooksOptions = Omit<
  CurrentProtectionOptions,
  "root" | "cache" | "maxDirectories"
> &
  Required<Pick<CurrentProtectionOptions, "cache" | "maxDirectories">> & {
    /** The real paths of the folders besides the workspace `root` that commands may write now. */
    writableFolders(root: string): string[];
  };

/** The looks by the wrapper's own policy options. */
export function workspaceLooks({
  writableFolders,
  ...policy
}: WorkspaceLooksOptions): WorkspaceLooks {
  /** The look at one folder commands write: the workspace, or one of its writable folders. */
  const lookAt = async (top: string, tops: readonly string[]): Promise<WorkspaceLook> => {
    // The other folders' repositories may keep machinery in this one (a core.hooksPath here).
    const otherRoots = tops.filter((each) => each !== top);
    const protection = await currentProtection({ ...policy, root: top, otherRoots });
    return {
      gitEntries: protection.gitEntries,
      unreadable: protection.unreadableFolders,
      missing: protection.paths.filter(({ state }) => state === "missing"),
    };
  };
  const lookAll = async (root: string, folders: readonly string[]): Promise<WorkspaceLook> => {
    const looks = [];
    const tops = [root, ...folders];
    for (const top of tops) looks.push(await lookAt(top, tops));
    return joined(looks, folders);
  };
  /** What appeared in the one folder `top` since `since` (its part of a look). */
  const madeIn = async (
    top: string,
    tops: readonly string[],
    since: WorkspaceLook,
    protectedBefore: readonly string[] | undefined,
    wanted: boolean,
  ): Promise<{ notes: string[]; look: WorkspaceLook }> => {
    const inside = <T>(items: readonly T[], pathOf: (item: T) => string) =>
      items.filter((item) => isInside(top, pathOf(item)));
    const missing = inside(since.missing, ({ path: each }) => each);
    const notes = moveAsideAppeared(top, missing);
    // A session's look walks the folder; where it fails (one past the folder limit throws
    // TOO_LARGE) the repositories are made inert from the walk alone all the same.
    let looked: WorkspaceLook | undefined;
    let failure: unknown;
    if (wanted) {
      try {
        looked = await lookAt(top, tops);
      } catch (error) {
        failure = error;
      }
    }
    // A folder the command closed (chmod 000) would hide from the look what it made inside: it
    // is opened again, and looked at again.
    let gitEntries: readonly string[];
    let unreadable: readonly string[];
    if (looked !== undefined) {
      const reopened = await reopenClosedFolders(top, since, looked, () => lookAt(top, tops));
      notes.push(...reopened.notes);
      looked = reopened.found;
      ({ gitEntries, unreadable } = looked);
    } else {
      const walker = policy.cache.walker(top, policy.maxDirectories);
      // A command that made more folders than the walk's limit may have made a repository past
      // it: the rest is searched too.
      const walkNow = async () => {
        const scan = await walker.scan();
        const past = scan.truncated ? searchTree(top) : undefined;
        return {
          gitEntries: past?.gitEntries ?? scan.gitEntries,
          unreadable: [...scan.unreadable, ...(past?.unreadable ?? [])],
          complete: !scan.truncated || past !== undefined,
        };
      };
      const reopened = await reopenClosedFolders(top, since, await walkNow(), walkNow);
      notes.push(...reopened.notes);
      if (!reopened.found.complete) {
        notes.push(
          `pleach could not look for every repository this command made: ${top} holds more than ${policy.maxDirectories.toLocaleString("en-US")} folders, and the search past them did not end in time; do not run git there or open it in an editor before the folders it made are removed`,
        );
      }
      ({ gitEntries, unreadable } = reopened.found);
    }
    if (policy.gitWrites === true) {
      const writable = writableGitDirectories(top, { gitEntries, missing: [], unreadable });
      notes.push(...disarmRebaseTodos(top, writable));
    }
    const notInert: string[] = [];
    notes.push(
      ...makeNewRepositoriesInert({
        root: top,
        before: inside(since.gitEntries, (each) => each),
        after: gitEntries,
        notInert,
        rootRepositoryMade: missing.some(({ path: each }) => each === `${top}/.git`),
        ...(protectedBefore === undefined
          ? {}
          : { protectedBefore: inside(protectedBefore, (each) => each) }),
      }),
    );
    if (failure !== undefined) throw failure;
    // Looked at again only when something was moved or made inert: the missing paths changed.
    const look =
      looked === undefined
        ? { gitEntries, missing: [], unreadable }
        : notes.length === 0
          ? looked
          : await lookAt(top, tops);
    // A repository that could not be made inert stays new, and a folder closed since `since` stays
    // one to open: the next look tries again (a session's jobs may have closed it again).
    const pending = new Set(notInert);
    const closedBefore = new Set(since.unreadable);
    return {
      notes,
      look: {
        ...look,
        gitEntries: look.gitEntries.filter((entry) => !pending.has(entry)),
        unreadable: look.unreadable.filter((folder) => isInsideAny(closedBefore, folder)),
      },
    };
  };
  return {
    look: (root) => lookAll(root, writableFolders(root)),
    async madeSince(root, since, { protectedBefore, look: wanted = true } = {}) {
      const folders = since.folders ?? [];
      const notes: string[] = [];
      const looks: WorkspaceLook[] = [];
      const tops = [root, ...folders];
      // Every folder is looked at, whatever failed in another (its repositories made inert).
      let failure: unknown;
      for (const top of tops) {
        try {
          const found = await madeIn(top, tops, since, protectedBefore, wanted);
          notes.push(...found.notes);
          looks.push(found.look);
        } catch (error) {
          failure ??= error;
        }
      }
      if (failure !== undefined) throw failure;
      return { notes, look: joined(looks, folders) };
    },
  };
}

/** One look of the workspace and its writable `folders`, from the look of each. */
function joined(looks: readonly WorkspaceLook[], folders: readonly string[]): WorkspaceLook {
  return {
    gitEntries: looks.flatMap((each) => each.gitEntries),
    unreadable: looks.flatMap((each) => each.unreadable),
    missing: looks.flatMap((each) => each.missing),
    ...(folders.length === 0 ? {} : { folders }),
  };
}

/** The `.git` folders of the folder `top` whose objects, refs and index commands may write. */
function writableGitDirectories(top: string, look: WorkspaceLook): string[] {
  return [path.join(top, ".git"), ...look.gitEntries].filter(
    (entry) => path.basename(entry) === ".git" && pathState(entry) === "directory",
  );
}

/**
 * The look a command's result carries until its own look ends, and when that fails: nothing known
 * but the folders closed since the last look, which stay to open at the next.
 */
export function failedLook(since: WorkspaceLook | undefined, hostFacts: HostFacts): WorkspaceLook {
  return {
    gitEntries: [],
    missing: [],
    unreadable: since?.unreadable ?? hostFacts.unreadableFolders,
  };
}
