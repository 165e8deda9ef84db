import { lstatSync, mkdirSync } from "node:fs";
import path from "node:path";
import { privateFolderProblem } from "../private-folder.js";

/**
 * `${XDG_RUNTIME_DIR:-/tmp}/pleach-<uid>/<name>`: where a process keeps what the next one needs
 * (the placeholders it made, the walks of workspaces), made (mode 700) when missing; `undefined`
 * unless both folders are real folders of our uid that group and others cannot enter, since a
 * folder another user can write could have what is kept there swapped.
 */
export function userStateFolder(name: string): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const runtime = process.env.XDG_RUNTIME_DIR;
  const base = runtime !== undefined && path.isAbsolute(runtime) ? runtime : "/tmp";
  const top = path.join(base, `pleach-${uid}`);
  const folder = path.join(top, name);
  return privateFolder(top, uid) && privateFolder(folder, uid) ? folder : undefined;
}

function privateFolder(folder: string, uid: number): boolean {
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
  }
  return privateFolderProblem(lstatSync(folder, { throwIfNoEntry: false }), uid) === undefined;
}
