import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, rename, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import { BUBBLEWRAP_PATH } from "../os/bubblewrap.js";

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
 * Remove everything inside `folder`, keeping `folder` itself. With `aside` (a new name in a
 * folder commands cannot reach, on the same file system), the entries are first moved there in
 * one rename each, which moves a link as a link: what a command sees of `folder` is empty at once,
 * and what is removed is out of its reach by path while it is. Then each entry is judged by its
 * own `lstat`, so a link is removed as a link and never followed, and a folder is made writable
 * (through a descriptor that cannot have followed a link) before it is emptied: Go makes its
 * module cache read-only (files 444, folders 555). Nothing on another file system is touched.
 */
export async function emptyFolder(folder: string, aside?: string): Promise<void> {
  const top = await lstat(folder);
  if (aside === undefined) {
    await removeContents(folder, top.dev);
    return;
  }
  await mkdir(aside, { mode: 0o700 });
  try {
    for (const name of await readdir(folder)) {
      await rename(path.join(folder, name), path.join(aside, name)).catch((error) => {
        // Gone already; or a mount point, left where it is.
        if (!["ENOENT", "EBUSY", "EXDEV"].includes((error as NodeJS.ErrnoException).code ?? "")) {
          throw error;
        }
      });
    }
  } finally {
    await removeContents(aside, top.dev);
    await rmdir(aside);
  }
}

/**
 * Remove what `folder` holds. Where bubblewrap runs, by `rm` in a sandbox of its own where only
 * `folder` is writable: a command of another sandbox that still has the cache bound can swap a
 * folder in it for a link to a file of the user's, but what that link leads to is read-only
 * there, so nothing outside `folder` is removed, however the race goes. Elsewhere (or when that
 * sandbox does not start) by {@link emptyBelow} on the host.
 */
async function removeContents(folder: string, device: number): Promise<void> {
  if (process.platform === "linux" && (await removedConfined(folder))) return;
  await emptyBelow(folder, device);
}

/** Whether `rm` in a sandbox where only `folder` is writable emptied it. */
function removedConfined(folder: string): Promise<boolean> {
  const script = 'chmod -R u+rwx -- "$1" 2>/dev/null; cd -- "$1" && rm -rf -- ./* ./.[!.]* ./..?*';
  return new Promise((resolve) => {
    const child = spawn(
      BUBBLEWRAP_PATH,
      [
        "--die-with-parent",
        "--unshare-all",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--bind",
        folder,
        folder,
        "--",
        "/bin/sh",
        "-c",
        script,
        "pleach-empty-cache",
        folder,
      ],
      { stdio: "ignore", env: { PATH: "/usr/bin:/bin" } },
    );
    child.once("error", () => resolve(false));
    child.once("exit", async () => {
      // Judged by what is left, not by rm's status (a name gone meanwhile is no failure).
      resolve((await readdir(folder).catch(() => [""])).length === 0);
    });
  });
}

async function emptyBelow(folder: string, device: number): Promise<void> {
  // An entry gone meanwhile (another process emptying the same folder) is no failure.
  const names = await readdir(folder).catch(unlessGone([] as string[]));
  for (const name of names) {
    const entry = path.join(folder, name);
    const info = await lstat(entry).catch(() => undefined);
    if (info === undefined) continue;
    if (info.isDirectory()) {
      // A mount point (another file system) is left as it is.
      if (info.dev !== device) continue;
      await writableFolder(entry).catch(unlessGone(undefined));
      await emptyBelow(entry, device);
      await rmdir(entry).catch(unlessGone(undefined));
    } else {
      await unlink(entry).catch(unlessGone(undefined));
    }
  }
}

/** A `catch` handler that gives `fallback` for ENOENT and throws anything else. */
function unlessGone<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return fallback;
    throw error;
  };
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
