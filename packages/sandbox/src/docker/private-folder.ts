import { lstat, mkdir } from "node:fs/promises";
import { sandboxUnavailableError } from "@pleach/coding-agent/sandbox";

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
 * Refuse `folder` unless it is a real folder (not a symbolic link) of `uid` that group and others
 * cannot enter: a folder another user made or can write could swap the socket and get the token.
 */
export async function checkPrivateFolder(folder: string, uid: number): Promise<void> {
  const info = await lstat(folder);
  let problem: string | undefined;
  if (info.isSymbolicLink()) problem = "is a symbolic link";
  else if (!info.isDirectory()) problem = "is not a folder";
  else if (info.uid !== uid) problem = `belongs to uid ${info.uid}, not ${uid}`;
  else if ((info.mode & 0o077) !== 0) {
    problem = `has mode ${(info.mode & 0o777).toString(8)}: group or others may enter it`;
  }
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
