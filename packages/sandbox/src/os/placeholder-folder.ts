import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  rmdirSync,
  type Stats,
  utimesSync,
} from "node:fs";
import path from "node:path";

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
 * The empty folder inside every placeholder. Removing a mount point on the host detaches the
 * mount over it inside every sandbox, so a placeholder must not be removable while a command or a
 * job runs over it: with a folder inside, `rmdir` fails (not empty), and removing that folder needs
 * write permission on the placeholder (mode 555), which an unprivileged user's `git clean -fd` or
 * `rm -rf` does not have. For root, the placeholder is made immutable too (see {@link setImmutable}).
 * Git lists no empty folder, so `git status` stays clean.
 */
export const PLACEHOLDER_KEEPER = ".pleach-placeholder";

/**
 * Make the placeholder folder at `target` (mode 555, holding only {@link PLACEHOLDER_KEEPER}),
 * marked as recorded at `pendingSinceMs`; `undefined` when something is there already. Its
 * identity is read by {@link identityOf} once {@link setImmutable} is done, which changes it.
 * Synchronous: a dozen mkdir and rmdir calls cost less than the thread-pool round trips of their
 * asynchronous forms.
 */
export function createPlaceholder(target: string, pendingSinceMs: number): boolean {
  try {
    mkdirSync(target, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  mkdirSync(path.join(target, PLACEHOLDER_KEEPER), { mode: 0o555 });
  chmodSync(target, 0o555);
  // Marked at once with a modification time no folder made now has, derived from the record, so
  // that a run killed before it records the identity leaves a folder the next start can tell
  // from one the user made since; killed between the mkdir and this, it is left alone.
  const mark = markOf(pendingSinceMs) / 1000;
  utimesSync(target, mark, mark);
  return true;
}

/** Where `chattr` is: a fixed place, never a `PATH` entry (one may lie in the workspace). */
const CHATTR = ["/usr/bin/chattr", "/bin/chattr"].find((file) => existsSync(file));

/**
 * Set (or clear) the immutable flag of the placeholders `targets` when this process is root,
 * for whom mode 555 is no bar: root's `git clean -fd` would remove them, taking the protection
 * from under a running job. Needs `chattr` and CAP_LINUX_IMMUTABLE (root in a container often
 * lacks it) and a file system with the flag; without them nothing changes, and the session
 * notices the removal before its next command instead (`SessionSandbox.changedMount`).
 * Changes the folders' change time.
 */
export function setImmutable(targets: readonly string[], immutable: boolean): void {
  if (targets.length === 0 || process.getuid?.() !== 0 || CHATTR === undefined) return;
  spawnSync(CHATTR, ["-f", immutable ? "+i" : "-i", "--", ...targets], {
    stdio: "ignore",
    env: { PATH: "/usr/bin:/bin" },
  });
}

/** Twenty years, in milliseconds: how far a placeholder's mark lies before its record. */
const MARK_OFFSET_MS = 20 * 365 * 24 * 3_600_000;

/** The modification time (ms) a placeholder recorded as about to be made at `since` is marked with. */
export function markOf(since: number): number {
  return Math.floor(since) - MARK_OFFSET_MS;
}

/**
 * Remove each of `placeholders` that is still the placeholder with its identity (its keeper
 * inside); the paths removed. One `chattr` clears the immutable flag of them all.
 */
export function removePlaceholders(
  placeholders: readonly { path: string; identity: Identity }[],
): string[] {
  const same = placeholders
    .filter(({ path: target, identity }) => sameIdentity(identityOf(target), identity))
    .map(({ path: target }) => target);
  setImmutable(same, false);
  return same.filter((target) => {
    try {
      chmodSync(target, 0o700);
      try {
        rmdirSync(path.join(target, PLACEHOLDER_KEEPER));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
      rmdirSync(target);
      return true;
    } catch {
      // Gone already, or not empty: then it is no longer ours to remove.
      return false;
    }
  });
}

/** Remove `target` if it is still the placeholder with `identity`; whether it was removed. */
export function removeIfSame(target: string, identity: Identity): boolean {
  return removePlaceholders([{ path: target, identity }]).length === 1;
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
