import type { Stats } from "node:fs";
import { lookupLstat, lookupRealpath } from "./host-lookups.js";

/** What is at a protected path. */
export type ProtectedPathState = "directory" | "file" | "symbolic-link" | "other" | "missing";

/** What an `lstat` found: a final symbolic link is reported as one, never followed. */
export function stateOf(info: Stats | undefined): ProtectedPathState {
  if (info === undefined) return "missing";
  if (info.isSymbolicLink()) return "symbolic-link";
  if (info.isDirectory()) return "directory";
  if (info.isFile()) return "file";
  return "other";
}

/** What is at `target` now, without following a final symbolic link. */
export function pathState(target: string): ProtectedPathState {
  return stateOf(lookupLstat(target));
}

/** The real path of `target`, or `target` itself when it cannot be resolved (missing, say). */
export function realpathOr(target: string): string {
  try {
    // Most paths asked about (credential stores, on every file read) are missing: an lstat that
    // does not throw says so at a fifth of the cost of the exception realpath would throw.
    if (lookupLstat(target) === undefined) return target;
    return lookupRealpath(target);
  } catch {
    return target;
  }
}
