import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { at, type HeldFolder, type WorkspaceRoot } from "../beneath.js";

/**
 * The text of `name` in the held folder when it is a regular file of at most `maxBytes` (read
 * without following a link, nor waiting on a FIFO); `undefined` when it is none, or larger.
 */
export function readSmallFile(
  workspace: WorkspaceRoot,
  folder: HeldFolder,
  name: string,
  maxBytes: number,
): string | undefined {
  let fd: number;
  try {
    fd = openSync(
      at(workspace, folder, name),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > maxBytes) return undefined;
    const buffer = Buffer.alloc(info.size);
    let read = 0;
    while (read < buffer.length) {
      const count = readSync(fd, buffer, read, buffer.length - read, read);
      if (count === 0) break;
      read += count;
    }
    return buffer.subarray(0, read).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Create `name` in the held folder with `text`, failing if anything (a link too) is there. */
export function writeNewFile(
  workspace: WorkspaceRoot,
  folder: HeldFolder,
  name: string,
  text: string,
): void {
  const fd = openSync(
    at(workspace, folder, name),
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
