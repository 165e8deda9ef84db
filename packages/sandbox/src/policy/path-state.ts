import { lstatSync, readlinkSync, realpathSync, type Stats, statSync } from "node:fs";
import path from "node:path";

/**
 * What is found today at a path that must stay read-only. `missing` means nothing is there: what a
 * command makes there is moved aside when it ends (`moveAsideAppeared`).
 */
export type ProtectedPathState = "directory" | "file" | "symbolic-link" | "other" | "missing";

/** What an `lstat` found: a final symbolic link is reported as one, never followed. */
export function stateOf(info: Stats | undefined): ProtectedPathState {
  if (info === undefined) return "missing";
  if (info.isSymbolicLink()) return "symbolic-link";
  if (info.isDirectory()) return "directory";
  if (info.isFile()) return "file";
  return "other";
}

/**
 * `lstat` of `target`, `undefined` when nothing is there: missing, a file where a folder was
 * expected, or past a link loop (a command can make one on the way to a path the policy looks
 * at, a hooks folder named by a nested repository's config; the policy then names the link
 * rather than fail every command with a bare ELOOP). Other errors throw.
 */
export function lstatOr(target: string): Stats | undefined {
  try {
    return lstatSync(target, { throwIfNoEntry: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

/**
 * What is at `target`, following links, or `undefined` when nothing the caller can reach is there
 * (missing, a loop, a file where a folder was expected, a folder it may not search): the sandbox
 * keeps the caller's uid, so a command cannot reach it either.
 */
export function statOr(target: string): Stats | undefined {
  try {
    return statSync(target, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** What is at `target` now, without following a final symbolic link. */
export function pathState(target: string): ProtectedPathState {
  return stateOf(lstatOr(target));
}

/** The real path of `target`, or `target` itself when it cannot be resolved (missing, say). */
export function realpathOr(target: string): string {
  try {
    // Most paths asked about (credential stores) are missing: an lstat that does not throw says
    // so at a fifth of the cost of the exception realpath would throw.
    if (lstatOr(target) === undefined) return target;
    return realpathSync.native(target);
  } catch {
    return target;
  }
}

/** Symbolic links followed on one path before giving up, as Linux does (ELOOP). */
const MAX_LINKS = 40;

/**
 * Where `target` (absolute) leads, every symbolic link on the way (the final one too) followed
 * as the kernel would, and what does not exist yet appended as spelled: for a dangling link, the
 * path a command would create to make it lead somewhere. `target` itself when it leads nowhere
 * (a loop, a file where a folder was expected, a folder it may not search).
 */
export function leadsTo(target: string): string {
  let current = path.resolve(target);
  let missing: string[] = [];
  for (let links = 0; links <= MAX_LINKS; ) {
    try {
      return path.join(realpathSync.native(current), ...missing);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") return target;
    }
    // Something on the way is missing: the deepest part that exists, or a dangling link.
    const info = lstatOr(current);
    if (info?.isSymbolicLink() === true) {
      links += 1;
      // Relative to the real folder the link lies in (which exists: the link does).
      current = path.resolve(realpathSync.native(path.dirname(current)), readlinkSync(current));
      continue;
    }
    if (info !== undefined || current === "/") return target;
    missing = [path.basename(current), ...missing];
    current = path.dirname(current);
  }
  return target;
}
