import { fstatSync } from "node:fs";
import path from "node:path";
import { type Located, openedPath } from "./beneath.js";
import { isInside } from "./paths.js";
import {
  type HiddenPath,
  type HiddenScope,
  hiddenPathError,
  hiddenPathOf,
} from "./policy/hidden-reads.js";
import { statOr } from "./policy/path-state.js";
import type { WorkspaceProtection } from "./policy/protection.js";
import type { WorkspaceRoot } from "./workspace-root.js";

/**
 * The read policy on the host side: the file tools run unconfined, so they refuse what commands
 * cannot read (`hiddenReads`), judged on the real path of what the race-free walk holds open
 * (`/proc/self/fd` on Linux), never on the name the caller gave. That path lies in the workspace,
 * so the hidden paths that can apply to it (the `workspace` scope) are all they need, but for
 * another name of a file: a hard link can name a hidden file from anywhere.
 */

/** What the read policy hides, in the scope asked for (`hiddenWith`). */
export type HiddenPaths = (scope: HiddenScope) => readonly HiddenPath[];

/**
 * Throw `HIDDEN_PATH` when the file open as `fd` (walked as `walked`) lies at or under one of
 * `hidden` (the workspace scope's), or is another name of a hidden file (asked for in the host
 * scope only then: a file of more than one name is rare); `PROTECTED_PATH` naming both rules when
 * the protection policy covers it too.
 */
export async function refuseHiddenRead({
  root,
  fd,
  walked,
  shown,
  hidden,
  protection,
}: {
  root: WorkspaceRoot;
  fd: number;
  walked: string;
  /** The path as the caller wrote it. */
  shown: string;
  hidden: HiddenPaths;
  protection: () => Promise<WorkspaceProtection>;
}): Promise<void> {
  const opened = openedPath(fd, walked);
  const covering = hiddenPathOf(hidden("workspace"), [opened]) ?? hardLinkedFile(fd, hidden);
  if (covering === undefined) return;
  throw hiddenPathError(shown, covering, "read", await protectedRule(root, opened, protection));
}

/**
 * The hidden file that the file open as `fd` is another name of (a hard link: `ln .pgpass
 * notes.txt` in a home that is the workspace), when it has more than one name.
 */
function hardLinkedFile(fd: number, hidden: HiddenPaths): HiddenPath | undefined {
  const opened = fstatSync(fd);
  if (opened.nlink < 2 || !opened.isFile()) return undefined;
  return hidden("host").find((each) => {
    if (each.state !== "file") return false;
    const info = statOr(each.path);
    return info?.dev === opened.dev && info.ino === opened.ino;
  });
}

/**
 * Throw `HIDDEN_PATH` when the target of `located` (its held folder's real path, then the names
 * below it) lies at or under one of `hidden` (the workspace scope's: a write replaces the file
 * rather than write through another name of it).
 */
export function refuseHiddenWrite(
  root: WorkspaceRoot,
  located: Located,
  shown: string,
  hidden: readonly HiddenPath[],
): void {
  const folder = openedPath(located.parent.fd, path.join(root.real, located.parent.relative));
  const covering = hiddenPathOf(hidden, [path.join(folder, ...located.missing, located.name)]);
  if (covering !== undefined) throw hiddenPathError(shown, covering, "write");
}

/**
 * The rule that protects the workspace path `real` too, if any, to name beside the hidden one; none
 * when the policy cannot be had (a workspace past its folder limit): the read is refused anyway.
 */
async function protectedRule(
  root: WorkspaceRoot,
  real: string,
  protection: () => Promise<WorkspaceProtection>,
): Promise<string | undefined> {
  if (!isInside(root.real, real)) return undefined;
  try {
    return (await protection()).ruleFor(path.relative(root.real, real));
  } catch {
    return undefined;
  }
}
