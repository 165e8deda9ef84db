import { lstatSync, mkdirSync, rmdirSync, type Stats, utimesSync } from "node:fs";

/**
 * A placeholder folder on disk: what makes a folder the one that was made (device, inode, change
 * time), so that only that very folder is ever removed, and the mark that tells one made by a
 * process killed before it recorded the identity.
 */
export interface Identity {
  device: number;
  inode: number;
  changedMs: number;
}

/**
 * Make the placeholder folder at `target` (empty, mode 555), marked as recorded at
 * `pendingSinceMs`; its identity, or `undefined` when something is there already. Synchronous: a
 * dozen mkdir and rmdir calls cost less than the thread-pool round trips of their asynchronous
 * forms.
 */
export function createPlaceholder(target: string, pendingSinceMs: number): Identity | undefined {
  try {
    mkdirSync(target, { mode: 0o555 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw error;
  }
  // Marked at once with a modification time no folder made now has, derived from the record, so
  // that a run killed before it records the identity leaves a folder the next start can tell
  // from one the user made since; killed between the mkdir and this, it is left alone.
  const mark = markOf(pendingSinceMs) / 1000;
  utimesSync(target, mark, mark);
  return identityOf(target);
}

/** Twenty years, in milliseconds: how far a placeholder's mark lies before its record. */
const MARK_OFFSET_MS = 20 * 365 * 24 * 3_600_000;

/** The modification time (ms) a placeholder recorded as about to be made at `since` is marked with. */
export function markOf(since: number): number {
  return Math.floor(since) - MARK_OFFSET_MS;
}

/** Remove `target` if it is still the empty folder with `identity`; whether it was removed. */
export function removeIfSame(target: string, identity: Identity): boolean {
  try {
    if (sameIdentity(identityOf(target), identity)) {
      rmdirSync(target);
      return true;
    }
  } catch {
    // Gone already, or not empty: then it is no longer ours to remove.
  }
  return false;
}

/** The identity of the folder at `target`, or `undefined` when no folder is there. */
export function identityOf(target: string): Identity | undefined {
  const info = lstatSync(target, { throwIfNoEntry: false });
  return info === undefined || !info.isDirectory()
    ? undefined
    : { device: info.dev, inode: info.ino, changedMs: info.ctimeMs };
}

/** Whether the folder is still the one with identity `right`. */
export function sameIdentity(left: Identity | undefined, right: Identity): boolean {
  return (
    left !== undefined &&
    left.device === right.device &&
    left.inode === right.inode &&
    left.changedMs === right.changedMs
  );
}

/** A key naming a folder at `target` with that identity, for sets of them. */
export function identityKey(target: string, { device, inode, changedMs }: Identity): string {
  return `${device}:${inode}:${changedMs}:${target}`;
}

/** Whether a folder looks like a placeholder: ours, mode 555 (then the registries say). */
export function mayBePlaceholder(info: Stats | undefined): info is Stats {
  return (
    info?.isDirectory() === true &&
    info.uid === process.getuid?.() &&
    (info.mode & 0o7777) === 0o555
  );
}
