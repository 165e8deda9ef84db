import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  unlinkSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { isInside } from "../paths.js";
import { privateFolderBelow, type StateFolder } from "../user-state-folder.js";

/** The name of a workspace's cache folder: the first 16 hex digits of its root's sha256. */
export function cacheFolderName(root: string): string {
  return createHash("sha256").update(root).digest("hex").slice(0, 16);
}

/**
 * The variables a confined command gets pointing at its workspace's cache folder, each at a
 * folder of its own there (`${XDG_CACHE_HOME:-~/.cache}/pleach/caches/<workspace>/<folder>`), and
 * why. `CARGO_HOME` moves cargo's whole home, so the host's `~/.cargo/config.toml` is not read
 * inside. `GOFLAGS` is never set here.
 */
export const CACHE_VARIABLES: Readonly<Record<string, { folder: string; why: string }>> = {
  GOCACHE: { folder: "go-build", why: "Go's build cache (go build, go test)" },
  GOMODCACHE: { folder: "go-mod", why: "Go's module cache (go mod download)" },
  CARGO_HOME: { folder: "cargo", why: "cargo's registry and git caches" },
  PIP_CACHE_DIR: { folder: "pip", why: "pip's wheel and download cache" },
  UV_CACHE_DIR: { folder: "uv", why: "uv's cache" },
  npm_config_cache: { folder: "npm", why: "npm's cache and logs" },
  XDG_CACHE_HOME: { folder: "xdg", why: "every other tool that follows the XDG rules" },
};

/** The variables of {@link CACHE_VARIABLES} for the cache folder `folder`. */
export function cacheEnvironment(folder: string): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, { folder: sub }] of Object.entries(CACHE_VARIABLES)) {
    environment[name] = path.join(folder, sub);
  }
  return environment;
}

/**
 * The bubblewrap mounts of the cache folder `folder`: bound writable over the read view, after
 * it. The folders between an emptied one (the home) and it are made first, of mode 555 where
 * bubblewrap sets modes (`byPerms`), so that the cache is the only place there a command writes,
 * rather than folders bubblewrap would make writable on the way to its mount point.
 */
export function cacheMountArguments(
  folder: string,
  emptied: readonly { path: string; state: "folder" | "file" }[],
  byPerms: boolean,
): string[] {
  const args: string[] = [];
  // The deepest emptied folder above it (a home inside an emptied /home).
  const within = emptied
    .filter(({ path: top, state }) => state === "folder" && top !== folder && isInside(top, folder))
    .at(-1);
  if (within !== undefined && byPerms) {
    const between = path.relative(within.path, path.dirname(folder));
    let current = within.path;
    for (const name of between === "" ? [] : between.split(path.sep)) {
      current = path.join(current, name);
      args.push("--perms", "0555", "--dir", current);
    }
  }
  args.push("--bind", folder, folder);
  return args;
}

/** The user's cache folder: `${XDG_CACHE_HOME:-~/.cache}` (an absolute `XDG_CACHE_HOME` only). */
export function userCacheFolder(
  hostEnvironment: Readonly<Record<string, string | undefined>>,
): string {
  const given = hostEnvironment.XDG_CACHE_HOME;
  const home = hostEnvironment.HOME;
  return given !== undefined && path.isAbsolute(given)
    ? given
    : path.join(home !== undefined && path.isAbsolute(home) ? home : os.homedir(), ".cache");
}

/** Options of {@link workspaceCacheFolder}. */
export interface WorkspaceCacheFolderOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Where `XDG_CACHE_HOME` and `HOME` are read (the wrapper's `hostEnvironment`). */
  hostEnvironment: Readonly<Record<string, string | undefined>>;
}

/**
 * The private cache folder of the workspace `root`, with every folder of
 * {@link CACHE_VARIABLES} in it, each made (mode 700) when missing and checked to be a real
 * folder of our uid that group and others cannot enter; or why it cannot be had. The user's cache
 * folder itself must be ours (or root's) and writable by nobody else, so that nobody else can swap
 * what is below. Never the host's own caches: the folders are pleach's alone, one per workspace
 * (the first 16 hex digits of the sha256 of its real path), so that a command can poison neither
 * the user's builds nor another workspace's.
 */
export function workspaceCacheFolder({
  root,
  hostEnvironment,
}: WorkspaceCacheFolderOptions): StateFolder {
  const uid = process.getuid?.();
  if (uid === undefined) return { problem: "this platform has no user ids" };
  const userCache = userCacheFolder(hostEnvironment);
  let base: string;
  try {
    // Only the cache folder itself: a home that is missing is not made.
    mkdirSync(userCache, { mode: 0o700 });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code !== "EEXIST") return { problem: `${userCache} cannot be made (${code})` };
  }
  try {
    base = realpathSync(userCache);
  } catch (error) {
    return {
      problem: `${userCache} cannot be resolved (${(error as NodeJS.ErrnoException).code})`,
    };
  }
  const info = lstatSync(base);
  if (!info.isDirectory() || (info.uid !== uid && info.uid !== 0) || (info.mode & 0o022) !== 0) {
    return { problem: `${base} is not a folder of uid ${uid} that only it can write` };
  }
  const top = privateFolderBelow(base, ["pleach", "caches", cacheFolderName(root)], uid);
  if (!("folder" in top)) return top;
  const { folder } = top;
  if (isInside(root, folder) || isInside(folder, root)) {
    return { problem: `${folder} overlaps the workspace ${root}` };
  }
  for (const { folder: sub } of Object.values(CACHE_VARIABLES)) {
    repairEntry(path.join(folder, sub));
    const made = privateFolderBelow(folder, [sub], uid);
    if (!("folder" in made)) return made;
  }
  return { folder };
}

/**
 * Undo what a command may have done to a folder of the cache (the cache folder is its to write):
 * a link or file in its place is removed (the link itself, never what it names), a folder opened
 * to group or others is closed again, through a descriptor opened without following a link.
 */
function repairEntry(entry: string): void {
  const info = lstatSync(entry, { throwIfNoEntry: false });
  if (info === undefined) return;
  try {
    if (!info.isDirectory()) {
      unlinkSync(entry);
    } else if ((info.mode & 0o077) !== 0) {
      const descriptor = openSync(
        entry,
        constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
      );
      try {
        fchmodSync(descriptor, 0o700);
      } finally {
        closeSync(descriptor);
      }
    }
  } catch {
    // What stays wrong is the check's problem.
  }
}
