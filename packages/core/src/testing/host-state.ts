import { createHash } from "node:crypto";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import path from "node:path";

/**
 * What the host looks like at a set of paths: every entry beneath them with its type, mode, size,
 * owner, content hash or link target. Folder timestamps are left out (a file a command made and
 * removed touches its folder's mtime, which is no change a reader sees).
 */
export async function hostState(paths: readonly string[]): Promise<Record<string, string>> {
  const state: Record<string, string> = {};
  for (const target of paths) await describe(target, state);
  return state;
}

async function describe(target: string, state: Record<string, string>): Promise<void> {
  let info: Awaited<ReturnType<typeof lstat>>;
  try {
    info = await lstat(target);
  } catch {
    state[target] = "missing";
    return;
  }
  const mode = (info.mode & 0o7777).toString(8);
  if (info.isSymbolicLink()) {
    state[target] = `link -> ${await readlink(target)}`;
  } else if (info.isFile()) {
    const hash = createHash("sha256")
      .update(await readFile(target))
      .digest("hex");
    state[target] = `file ${mode} ${info.uid} ${info.size} ${hash} ino=${info.ino}`;
  } else if (info.isDirectory()) {
    state[target] = `dir ${mode} ${info.uid} ino=${info.ino}`;
    for (const entry of (await readdir(target)).sort()) {
      await describe(path.join(target, entry), state);
    }
  } else {
    state[target] = `other ${mode} ino=${info.ino}`;
  }
}
