import { constants } from "node:fs";
import { lstat, open, readdir, rmdir, unlink } from "node:fs/promises";
import path from "node:path";

/**
 * The bytes the files below `folder` take on disk, found by `lstat` of every entry: a link counts
 * as itself and is never followed (a command may plant one to a host file there), nor is a mount
 * of another file system crossed.
 */
export async function folderBytes(folder: string): Promise<number> {
  const top = await lstat(folder);
  let total = 0;
  const pending = [folder];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    let names: string[];
    try {
      names = await readdir(current);
    } catch {
      continue;
    }
    for (const name of names) {
      const entry = path.join(current, name);
      const info = await lstat(entry).catch(() => undefined);
      if (info === undefined || info.dev !== top.dev) continue;
      total += info.blocks * 512;
      if (info.isDirectory()) pending.push(entry);
    }
  }
  return total;
}

/**
 * Remove everything inside `folder`, keeping `folder` itself: each entry is judged by its own
 * `lstat`, so a link is removed as a link and never followed, and a folder is made writable
 * before it is emptied (Go makes its module cache read-only: files 444, folders 555). Only a
 * folder `lstat` found is changed, and only on the file system of `folder`.
 */
export async function emptyFolder(folder: string): Promise<void> {
  const top = await lstat(folder);
  await emptyBelow(folder, top.dev);
}

async function emptyBelow(folder: string, device: number): Promise<void> {
  for (const name of await readdir(folder)) {
    const entry = path.join(folder, name);
    const info = await lstat(entry).catch(() => undefined);
    if (info === undefined) continue;
    if (info.isDirectory()) {
      // A mount point (another file system) is left as it is.
      if (info.dev !== device) continue;
      await writableFolder(entry);
      await emptyBelow(entry, device);
      await rmdir(entry);
    } else {
      await unlink(entry);
    }
  }
}

/** Make the folder `entry` ours to empty, through a descriptor that cannot have followed a link. */
async function writableFolder(entry: string): Promise<void> {
  const handle = await open(
    entry,
    constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
  );
  try {
    await handle.chmod(0o700);
  } finally {
    await handle.close();
  }
}
