import { lstatSync, mkdirSync } from "node:fs";
import path from "node:path";
import { privateFolderProblem } from "./private-folder.js";

/** A state folder that can be used, or why not. */
export type StateFolder = { folder: string } | { problem: string };

/**
 * `${XDG_RUNTIME_DIR:-/tmp}/pleach-<uid>/<name>`: where a process keeps what the next one needs
 * (the checkpoints of workspaces), made (mode 700) when missing. Used only
 * when both folders are real folders of our uid that group and others cannot enter, since a folder
 * another user can write (or made first, in a shared `/tmp`) could have what is kept there
 * swapped; otherwise `problem` says which folder is wrong and how, for the note of the feature
 * that goes without it.
 */
export function userStateFolder(name: string): StateFolder {
  const uid = process.getuid?.();
  if (uid === undefined) return { problem: "this platform has no user ids" };
  const top = userStateRoot();
  return privateFolderBelow(path.dirname(top), [path.basename(top), name], uid);
}

/** `${XDG_RUNTIME_DIR:-/tmp}/pleach-<uid>`: the folder that holds every {@link userStateFolder}. */
export function userStateRoot(): string {
  const runtime = process.env.XDG_RUNTIME_DIR;
  const base = runtime !== undefined && path.isAbsolute(runtime) ? runtime : "/tmp";
  return path.join(base, `pleach-${process.getuid?.() ?? "user"}`);
}

/**
 * `base/names[0]/names[1]/...`, each folder of the chain made (mode 700) when missing and checked
 * to be a real folder of `uid` that group and others cannot enter (`privateFolderProblem`); `base`
 * itself is not made nor checked (a `/tmp`, a user's cache folder): the first folder wrong is the
 * `problem`.
 */
export function privateFolderBelow(
  base: string,
  names: readonly string[],
  uid: number,
): StateFolder {
  let folder = base;
  for (const name of names) {
    folder = path.join(folder, name);
    const problem = privateFolder(folder, uid);
    if (problem !== undefined) return { problem };
  }
  return { folder };
}

/** Why `folder` cannot be had as a private folder of `uid` (made when missing), if it cannot. */
function privateFolder(folder: string, uid: number): string | undefined {
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code !== "EEXIST") return `${folder} cannot be made (${code})`;
  }
  const problem = privateFolderProblem(lstatSync(folder, { throwIfNoEntry: false }), uid);
  return problem === undefined ? undefined : `${folder} ${problem}`;
}
