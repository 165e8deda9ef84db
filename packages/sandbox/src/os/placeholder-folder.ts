import { spawnSync } from "node:child_process";
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  futimesSync,
  lstatSync,
  mkdirSync,
  openSync,
  rmdirSync,
  type Stats,
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

/** Folders opened by the strict walk: a folder, never through a symlink. */
const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const HAS_PROC_FD = process.platform === "linux";

/**
 * Open the folder at the absolute `target` without following any symlink on the way: on Linux
 * each component is opened relative to the one held before it (`/proc/self/fd/<held>/<name>`
 * with `O_NOFOLLOW`), so a sandboxed job that swaps a folder of the path for a link while the
 * host works on a placeholder cannot lead the host anywhere else; elsewhere only the last
 * component is opened so. The fd, or `undefined` when no folder is there, or only through a link.
 */
function openFolderStrictly(target: string): number | undefined {
  try {
    if (!HAS_PROC_FD) return openSync(target, FOLDER_FLAGS);
    let held = openSync("/", FOLDER_FLAGS);
    for (const name of target.split("/").filter((part) => part !== "")) {
      try {
        const next = openSync(`/proc/self/fd/${held}/${name}`, FOLDER_FLAGS);
        closeSync(held);
        held = next;
      } catch (error) {
        closeSync(held);
        throw error;
      }
    }
    return held;
  } catch (error) {
    if (NOT_A_FOLDER.has((error as NodeJS.ErrnoException).code ?? "")) return undefined;
    throw error;
  }
}

/** Errors that mean "no folder there" (or one only through a symlink) to {@link openFolderStrictly}. */
const NOT_A_FOLDER = new Set(["ENOENT", "ENOTDIR", "ELOOP", "EACCES"]);

/** The path that names `name` inside the folder held as `fd` (`at` the folder itself when `""`). */
function inFolder(fd: number, walked: string, name: string): string {
  return HAS_PROC_FD ? `/proc/self/fd/${fd}/${name}` : path.join(walked, name);
}

/**
 * Make a placeholder folder at each of `targets` (mode 555, holding only
 * {@link PLACEHOLDER_KEEPER}, immutable for root: see {@link setImmutable}), marked as recorded at
 * `pendingSinceMs`. Each is made in its parent folder as opened by {@link openFolderStrictly} and
 * then worked on through its own fd, never by path again, so that a job that swaps a path for a
 * link meanwhile cannot make the host change a file elsewhere. The identity of each folder made,
 * or `undefined` where something was there already (or its parent is not a folder, or reached
 * only through a link). Synchronous: a dozen mkdir calls cost less than the thread-pool round
 * trips of their asynchronous forms.
 */
export function createPlaceholders(
  targets: readonly string[],
  pendingSinceMs: number,
): (Identity | undefined)[] {
  const made: (number | undefined)[] = [];
  try {
    for (const target of targets) made.push(makeOne(target, pendingSinceMs));
    setImmutable(
      made.filter((fd) => fd !== undefined),
      true,
    );
    return made.map((fd) => (fd === undefined ? undefined : identityOfFd(fd)));
  } finally {
    for (const fd of made) if (fd !== undefined) closeSync(fd);
  }
}

/** Make one placeholder (see {@link createPlaceholders}); its fd, held open, or `undefined`. */
function makeOne(target: string, pendingSinceMs: number): number | undefined {
  const parent = openFolderStrictly(path.dirname(target));
  if (parent === undefined) return undefined;
  const name = path.basename(target);
  let fd: number;
  try {
    try {
      mkdirSync(inFolder(parent, path.dirname(target), name), { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return undefined;
      throw error;
    }
    fd = openSync(inFolder(parent, path.dirname(target), name), FOLDER_FLAGS);
  } catch (error) {
    if (NOT_A_FOLDER.has((error as NodeJS.ErrnoException).code ?? "")) return undefined;
    throw error;
  } finally {
    closeSync(parent);
  }
  try {
    const info = fstatSync(fd);
    if (info.uid !== process.getuid?.()) throw new Error(`not made by this process: ${target}`);
    mkdirSync(inFolder(fd, target, PLACEHOLDER_KEEPER), { mode: 0o555 });
    fchmodSync(fd, 0o555);
    // Marked at once with a modification time no folder made now has, derived from the record, so
    // that a run killed before it records the identity leaves a folder the next start can tell
    // from one the user made since; killed between the mkdir and this, it is left alone.
    const mark = markOf(pendingSinceMs) / 1000;
    futimesSync(fd, mark, mark);
    return fd;
  } catch {
    // Swapped for something else between the mkdir and the open: not ours to mark.
    closeSync(fd);
    return undefined;
  }
}

/** Where `chattr` is: a fixed place, never a `PATH` entry (one may lie in the workspace). */
const CHATTR = ["/usr/bin/chattr", "/bin/chattr"].find((file) => existsSync(file));

/**
 * Set (or clear) the immutable flag of the placeholder folders held open as `fds` when this
 * process is root, for whom mode 555 is no bar: root's `git clean -fd` would remove them, taking
 * the protection from under a running job. The folders are handed to `chattr` as inherited fds
 * (`/proc/self/fd/<n>/.`), never by path: by path, a job could swap a placeholder for a link to a
 * host file between the check and `chattr`, which follows links. Needs `chattr` and
 * CAP_LINUX_IMMUTABLE (root in a container often lacks it) and a file system with the flag;
 * without them nothing changes, and the session notices the removal before its next command
 * instead (`SessionSandbox.changedMount`). Changes the folders' change time.
 */
function setImmutable(fds: readonly number[], immutable: boolean): void {
  if (fds.length === 0 || process.getuid?.() !== 0 || CHATTR === undefined || !HAS_PROC_FD) {
    return;
  }
  spawnSync(
    CHATTR,
    ["-f", immutable ? "+i" : "-i", "--", ...fds.map((_, index) => `/proc/self/fd/${index + 3}/.`)],
    { stdio: ["ignore", "ignore", "ignore", ...fds], env: { PATH: "/usr/bin:/bin" } },
  );
}

/** Twenty years, in milliseconds: how far a placeholder's mark lies before its record. */
const MARK_OFFSET_MS = 20 * 365 * 24 * 3_600_000;

/** The modification time (ms) a placeholder recorded as about to be made at `since` is marked with. */
export function markOf(since: number): number {
  return Math.floor(since) - MARK_OFFSET_MS;
}

/**
 * Remove each of `placeholders` that is still the placeholder with its identity (its keeper
 * inside); the paths removed. Each is opened by {@link openFolderStrictly} and checked through
 * that fd, its mode and immutable flag changed through it (one `chattr` for them all), its keeper
 * removed inside it, and the folder itself removed from its parent as opened so: a job that
 * swaps a path for a link meanwhile cannot make the host change a mode or a flag elsewhere.
 */
export function removePlaceholders(
  placeholders: readonly { path: string; identity: Identity }[],
): string[] {
  const held: { path: string; fd: number }[] = [];
  try {
    for (const { path: target, identity } of placeholders) {
      const fd = openFolderStrictly(target);
      if (fd === undefined) continue;
      if (sameIdentity(identityOfFd(fd), identity)) held.push({ path: target, fd });
      else closeSync(fd);
    }
    setImmutable(
      held.map(({ fd }) => fd),
      false,
    );
    return held
      .filter(({ path: target, fd }) => {
        try {
          fchmodSync(fd, 0o700);
          try {
            rmdirSync(inFolder(fd, target, PLACEHOLDER_KEEPER));
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
          }
          return removeFromParent(target);
        } catch {
          // Gone already, or not empty: then it is no longer ours to remove.
          return false;
        }
      })
      .map(({ path: target }) => target);
  } finally {
    for (const { fd } of held) closeSync(fd);
  }
}

/** `rmdir` of `target` in its parent as opened by {@link openFolderStrictly}; whether done. */
function removeFromParent(target: string): boolean {
  const parent = openFolderStrictly(path.dirname(target));
  if (parent === undefined) return false;
  try {
    rmdirSync(inFolder(parent, path.dirname(target), path.basename(target)));
    return true;
  } finally {
    closeSync(parent);
  }
}

/** Remove `target` if it is still the placeholder with `identity`; whether it was removed. */
export function removeIfSame(target: string, identity: Identity): boolean {
  return removePlaceholders([{ path: target, identity }]).length === 1;
}

/** The identity of the folder held open as `fd`. */
function identityOfFd(fd: number): Identity {
  const info = fstatSync(fd);
  return { device: info.dev, inode: info.ino, changedMs: info.ctimeMs };
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
