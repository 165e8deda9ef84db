import { randomBytes, randomUUID } from "node:crypto";
import { closeSync, fchmodSync, fstatSync, lstatSync, renameSync } from "node:fs";
import path from "node:path";
import { at, type HeldFolder, locate } from "../beneath.js";
import { isInside } from "../paths.js";
import { realpathOr } from "../policy/path-state.js";
import type { ProtectedPath } from "../policy/protection.js";
import { type WorkspaceRoot, workspaceRoot } from "../workspace-root.js";

/** The suffix of what pleach moves aside: `.envrc` becomes `.envrc.made-by-command`. */
export const MADE_BY_COMMAND = ".made-by-command";

/**
 * Move aside whatever now stands at each of `missing` (protected paths that did not exist when a
 * command started, or at a session's last look): the command made it, and a host program would run
 * or trust it (direnv a new `.envrc`, an editor a new `.vscode/`, git a new `.git/commondir`). A
 * missing protected path is not kept from being made, so that commands see the workspace as it is
 * (no placeholder stands there); it is moved aside when the command ends instead, and while a
 * session's jobs run, before every host-side call. What stands there is renamed in its folder,
 * held open from the workspace root, to `NAME.made-by-command` (`.2`, `.3`, ... when taken); a link
 * on the way that leads out of the workspace is moved aside itself. The root's own `.git` is left
 * to `makeNewRepositoriesInert`, which keeps a repository a command made usable. Returns one note
 * per path moved, or that could not be.
 */
export function moveAsideAppeared(root: string, missing: readonly ProtectedPath[]): string[] {
  if (missing.length === 0) return [];
  const workspace = workspaceRoot(root, root);
  const notes: string[] = [];
  for (const { path: target, rule } of missing) {
    if (target === path.join(root, ".git") || !isInside(root, target) || target === root) continue;
    const shown = path.relative(root, target);
    let moved: { from: string; to: string } | undefined;
    try {
      moved = moveAside(workspace, shown);
    } catch (error) {
      notes.push(
        `${shown} is protected and something appeared there during the command, but pleach could not move it aside (${(error as Error).message}). Do not let a program on the host use it before you looked at it.`,
      );
      continue;
    }
    if (moved === undefined) continue;
    const why = rule === undefined ? "" : ` (${rule})`;
    notes.push(
      `${moved.from} was made by a sandboxed command at a protected path${why}: pleach moved it to ${moved.to} when the command ended. Look at it, and move it back yourself if it is wanted.`,
    );
  }
  return notes;
}

/**
 * Move aside what stands at `relative` now, if anything: the entry itself in the real folder it
 * is in, or, where a link on its way leads out of the workspace, that link. Returns what moved
 * where (workspace-relative).
 */
export function moveAside(
  workspace: WorkspaceRoot,
  relative: string,
): { from: string; to: string } | undefined {
  const root = workspace.real;
  const absolute = path.join(root, relative);
  // Through any link on the way, as a host program opening the path would go.
  if (lstatSync(absolute, { throwIfNoEntry: false }) === undefined) return undefined;
  const real = realpathOr(path.dirname(absolute));
  if (real !== root && !isInside(root, real)) {
    const link = firstLink(root, path.dirname(relative));
    if (link === undefined) throw new Error("its folder lies outside the workspace");
    return moveAside(workspace, link);
  }
  const folder = path.relative(root, real);
  const held = holdFolder(workspace, folder);
  if (held === undefined) return undefined;
  try {
    const name = path.basename(relative);
    const entry = at(workspace, held, name);
    if (lstatSync(entry, { throwIfNoEntry: false }) === undefined) return undefined;
    const aside = renameAside(workspace, held, name);
    if (aside === undefined) return undefined;
    return { from: path.join(folder, name), to: path.join(folder, aside) };
  } finally {
    closeSync(held.fd);
  }
}

/**
 * The folder at `relative` (a real path: no link in it) held open, or `undefined` when it is gone;
 * throws when a part of it was replaced by a link meanwhile.
 */
function holdFolder(workspace: WorkspaceRoot, relative: string): HeldFolder | undefined {
  // A name that is not there: `locate` then holds the folder itself.
  const probe = path.join(relative, `.pleach-${randomUUID()}`);
  const located = locate(workspace, probe);
  if (located.missing.length === 1 && located.relative === probe) return located.parent;
  located.close();
  if (located.missing.length !== 1) return undefined;
  throw new Error("a folder on its path was replaced by a link while pleach looked at it");
}

/** The shallowest part of `relative` below `root` that is a symbolic link now, if one is. */
function firstLink(root: string, relative: string): string | undefined {
  const parts = relative.split(path.sep);
  for (let index = 1; index <= parts.length; index += 1) {
    const prefix = parts.slice(0, index).join(path.sep);
    const info = lstatSync(path.join(root, prefix), { throwIfNoEntry: false });
    if (info === undefined) return undefined;
    if (info.isSymbolicLink()) return prefix;
  }
  return undefined;
}

/**
 * Rename `name` in the held folder to `NAME.made-by-command`, or, when a command took that name,
 * `NAME.made-by-command.<random>` (a name it cannot have made beforehand). A folder the command
 * made unwritable (its mode: it is the caller's own) is made writable for the owner first.
 * Returns the new name; `undefined` when `name` is gone meanwhile (another look moved it).
 */
export function renameAside(
  workspace: WorkspaceRoot,
  folder: HeldFolder,
  name: string,
): string | undefined {
  const aside = freeName(workspace, folder, `${name}${MADE_BY_COMMAND}`);
  const rename = () => renameSync(at(workspace, folder, name), at(workspace, folder, aside));
  try {
    // rename(2) moves the name itself: a link there is moved, never followed.
    rename();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code !== "EACCES" && code !== "EPERM") throw error;
    fchmodSync(folder.fd, (fstatSync(folder.fd).mode & 0o7777) | 0o700);
    try {
      rename();
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw again;
    }
  }
  return aside;
}

/** `base`, or `base.<random>`: a name nothing (not even a link) holds in the held folder. */
function freeName(workspace: WorkspaceRoot, folder: HeldFolder, base: string): string {
  for (let attempt = 0; attempt < 16; attempt += 1) {
    const candidate = attempt === 0 ? base : `${base}.${randomBytes(6).toString("hex")}`;
    if (lstatSync(at(workspace, folder, candidate), { throwIfNoEntry: false }) === undefined) {
      return candidate;
    }
  }
  throw new Error(`no free name beside ${base}`);
}
