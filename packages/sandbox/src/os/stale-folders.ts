import { readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const swept = new Set<string>();

/**
 * Remove, once per process and prefix, the folders `${prefix}<pid>-...` in the host's temporary
 * folder that processes no longer running left behind (killed before their exit handler ran).
 */
export async function sweepStaleFolders(prefix: string): Promise<void> {
  if (swept.has(prefix)) return;
  swept.add(prefix);
  const entries = await readdir(os.tmpdir()).catch(() => [] as string[]);
  for (const entry of entries) {
    if (!entry.startsWith(prefix)) continue;
    const owner = /^(\d+)-/.exec(entry.slice(prefix.length))?.[1];
    if (owner === undefined || Number(owner) === process.pid) continue;
    try {
      process.kill(Number(owner), 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") {
        await rm(path.join(os.tmpdir(), entry), { recursive: true, force: true }).catch(() => {});
      }
    }
  }
}
