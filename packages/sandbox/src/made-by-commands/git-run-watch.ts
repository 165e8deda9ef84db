import path from "node:path";
import { MountPoints } from "../os/mount-points.js";
import { isInside } from "../paths.js";
import type { ProtectedPath } from "../policy/protection.js";
import { moveAsideAppeared } from "./moved-aside.js";

/**
 * The entries of a `.git` folder that git on the host reads as soon as they appear, whatever it
 * runs (`git status` of an editor or a shell prompt): another common dir whose config it takes,
 * a config, the worktree config, hooks. With git writes a command could make one while it runs.
 */
const READ_AT_ONCE = new Set(["commondir", "config", "config.worktree", "hooks"]);

/**
 * Whether git on the host would use `target` as soon as it appears: an entry of
 * {@link READ_AT_ONCE} in a `.git` folder, or a `HEAD` beside a `.git` folder of `gitFolders`
 * (protected with git writes, see `workspaceProtection`): with that `.git` broken (its HEAD, refs
 * or objects, which git writes let a command change), git takes a folder holding a HEAD for a git
 * directory itself, whose config (the command's) a host `git fetch` or `git log` there then runs.
 */
function readAtOnce(target: string, gitFolders: ReadonlySet<string>): boolean {
  const name = path.basename(target);
  const folder = path.dirname(target);
  if (name === "HEAD") return gitFolders.has(path.join(folder, ".git"));
  return READ_AT_ONCE.has(name) && path.basename(folder) === ".git";
}

/** A watch over a command's missing {@link READ_AT_ONCE} entries (and HEADs) while it runs. */
export interface GitRunWatch {
  /** Aborted once the command made one: stop the command. */
  stop?: AbortSignal;
  /** What it moved aside and why it stopped the command, for the command's result. */
  notes: string[];
  close(): void;
}

/**
 * Watch, while a command runs with git writes, the {@link READ_AT_ONCE} entries missing in the
 * `.git` folders of the workspace and the other folders it writes (`roots`, the workspace first),
 * and the `HEAD` missing beside each: one that appears is moved aside at once and the command is
 * stopped, since a host program running git meanwhile would use it, and the command could make it
 * again. Without such an entry (or where the folders cannot be watched), nothing is watched and
 * the look when the command ends still moves it aside.
 */
export function watchGitRunEntries(
  roots: readonly string[],
  protectedPaths: readonly ProtectedPath[],
): GitRunWatch {
  // The `.git` folders git writes leave partly protected: those with protected entries.
  const gitFolders = new Set(
    protectedPaths
      .map(({ path: each }) => path.dirname(each))
      .filter((folder) => path.basename(folder) === ".git"),
  );
  const watched = protectedPaths.filter(
    ({ path: target, state }) => state === "missing" && readAtOnce(target, gitFolders),
  );
  const notes: string[] = [];
  if (watched.length === 0) return { notes, close() {} };
  const controller = new AbortController();
  const points = new MountPoints(watched, (target, how) => {
    if (how !== "appeared") return;
    const root = roots.find((each) => isInside(each, target)) ?? roots[0] ?? target;
    notes.push(
      ...moveAsideAppeared(
        root,
        watched.filter(({ path: each }) => each === target),
      ),
    );
    if (controller.signal.aborted) return;
    const made = path.relative(root, target);
    notes.push(
      path.basename(target) === "HEAD"
        ? `the command was stopped: it made ${made}, by which git on the host takes ${path.relative(root, path.dirname(target)) || "the workspace"} for a git directory once the .git beside it is broken (a git fetch or git log there would run what its config names); git writes leave it protected.`
        : `the command was stopped: it made ${made}, which git on the host reads at once (its next git status would run what it names); git writes leave it protected.`,
    );
    controller.abort(new Error(`the command made ${path.relative(root, target)}`));
  });
  return { stop: controller.signal, notes, close: () => points.close() };
}
