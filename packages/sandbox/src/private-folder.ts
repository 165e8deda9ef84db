import type { Stats } from "node:fs";
import { lstat, mkdir } from "node:fs/promises";
import { sandboxUnavailableError } from "@pleach/core/sandbox";

/**
 * Make `folder` (mode 700) unless it exists, then check it: see {@link checkPrivateFolder}.
 */
export async function makePrivateFolder(folder: string, uid: number): Promise<void> {
  try {
    await mkdir(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  await checkPrivateFolder(folder, uid);
}

/**
 * Why `folder` (its `lstat`) is not a private folder of `uid`, or `undefined` when it is: a real
 * folder (not a symbolic link) of `uid` that group and others cannot enter. A folder another user
 * made, or can write, could have what pleach keeps there swapped (a socket that receives a token,
 * a registry that names folders to remove).
 */
export function privateFolderProblem(info: Stats | undefined, uid: number): string | undefined {
  if (info === undefined) return "is missing";
  if (info.isSymbolicLink()) return "is a symbolic link";
  if (!info.isDirectory()) return "is not a folder";
  if (info.uid !== uid) return `belongs to uid ${info.uid}, not ${uid}`;
  if ((info.mode & 0o077) !== 0) {
    return `has mode ${(info.mode & 0o777).toString(8)}: group or others may enter it`;
  }
  return undefined;
}

/** Refuse `folder` unless it is private to `uid` ({@link privateFolderProblem}). */
export async function checkPrivateFolder(folder: string, uid: number): Promise<void> {
  const problem = privateFolderProblem(await lstat(folder), uid);
  if (problem !== undefined) {
    throw sandboxUnavailableError({
      message: `the sandbox socket folder ${folder} ${problem}; remove it, or choose another socketParent`,
      details: { reason: "socket-folder", folder },
    });
  }
}

/**
 * What is at a container's socket path: `missing` (not made yet), `ready` (a socket of `uid`), or
 * `foreign` (anything else: the token is not sent there).
 */
export async function socketFolderState(
  socketPath: string,
  uid: number,
): Promise<"missing" | "ready" | "foreign"> {
  try {
    const info = await lstat(socketPath);
    return info.isSocket() && info.uid === uid ? "ready" : "foreign";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
}
