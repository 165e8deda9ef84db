import { readFileSync, writeFileSync } from "node:fs";
import { lstat, readdir, readFile, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import { emptyFolder } from "./cache-pruning.js";
import { cacheFolderName } from "./caches.js";

/**
 * Note beside the cache folder `folder` (in the folder of every workspace's caches, which no
 * command sees) which workspace root it is for, so that {@link collectGoneWorkspaces} can tell
 * when that workspace is gone.
 */
export function markCacheRoot(folder: string, root: string): void {
  const marker = `${folder}.root`;
  try {
    if (readFileSync(marker, "utf8") === root) return;
  } catch {
    // Not written yet.
  }
  try {
    writeFileSync(marker, root, { mode: 0o600 });
  } catch {
    // Without it the folder is kept: a cache, not a correctness matter.
  }
}

/**
 * Remove the cache folders in `caches` (the folder of every workspace's caches) whose workspace
 * is gone, as their `.root` markers name it, except those in `inUse`; and what a process killed
 * while emptying a cache left aside. A folder without a marker is kept. Errors leave a folder as
 * it is: this only reclaims disk.
 */
export async function collectGoneWorkspaces(
  caches: string,
  inUse: (folder: string) => boolean,
): Promise<void> {
  for (const name of await readdir(caches).catch(() => [] as string[])) {
    const folder = path.join(caches, name);
    try {
      if (name.startsWith(".emptying-")) {
        // `.emptying-<name>-<pid>-<time>`: only what a process that is gone left.
        if (!alive(Number(name.split("-")[2]))) {
          await emptyFolder(folder);
          await rmdir(folder);
        }
        continue;
      }
      if (!/^[0-9a-f]{16}$/.test(name) || inUse(folder)) continue;
      const root = await readFile(`${folder}.root`, "utf8").catch(() => undefined);
      if (root === undefined || cacheFolderName(root) !== name) continue;
      if ((await lstat(root).catch(() => undefined)) !== undefined) continue;
      await emptyFolder(
        folder,
        path.join(caches, `.emptying-${name}-${process.pid}-${Date.now()}`),
      );
      await rmdir(folder);
      await unlink(`${folder}.root`);
    } catch {
      // Kept for now; the next process looks again.
    }
  }
}

/** Whether a process `pid` runs (or is another user's). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
