import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, read, readSync } from "node:fs";
import { mkdir, open, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import type { SandboxMode } from "@pleach/coding-agent/sandbox";
import { ToolError } from "@pleach/core";
import { type ConfinedPath, fromErrno } from "./paths.js";
import { protectedReason } from "./protected-paths.js";
import type { SpareBuffer } from "./spare-buffer.js";

/**
 * A workspace's files as bytes: what the local client's `readFile` and `writeFile` do under their
 * encodings, and what the sandbox server's file route does with raw bodies, so that both give the
 * same outcomes and codes.
 */

/**
 * Reads of up to this many bytes are made synchronously. From the page cache, a megabyte is copied
 * in about a tenth of a millisecond, less than the trip through libuv's thread pool that an
 * asynchronous read costs on a busy machine (measured: 0.15 to 0.3 ms), and much less than decoding
 * that megabyte into a string, which blocks the event loop anyway. Larger reads run off the loop,
 * so that a big file, or a slow file system, never holds it for long.
 */
const SYNC_READ_BYTES = 1024 * 1024;

/**
 * The bytes of the confined file `confined` (reported as `filePath`), in a buffer taken from
 * `spare`: give it back once its bytes are used. Path checks, open, fstat and close are
 * synchronous: each takes microseconds on a local file system, a fifth or less of a trip through
 * libuv's thread pool.
 */
export async function readConfinedFile(
  confined: ConfinedPath,
  filePath: string,
  maxFileBytes: number,
  spare: SpareBuffer,
): Promise<Buffer> {
  let fd: number;
  try {
    // One open, then everything through the descriptor: the checked file is the file read.
    // O_NONBLOCK so that a FIFO planted in the workspace cannot hang the open; O_NOFOLLOW so that a
    // final segment swapped for a symlink since it was resolved is refused, not followed.
    fd = openSync(confined.real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    throw fromErrno(error, filePath);
  }
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) {
      throw new ToolError("NOT_A_FILE", `is a folder, not a file: ${filePath} (list it instead)`);
    }
    if (!info.isFile()) throw new ToolError("NOT_A_FILE", `not a regular file: ${filePath}`);
    if (info.size > maxFileBytes) {
      throw new ToolError(
        "TOO_LARGE",
        `${filePath} has ${info.size} bytes, more than the ${maxFileBytes} this sandbox reads`,
      );
    }
    return await readWhole(fd, info.size, maxFileBytes, filePath, spare);
  } catch (error) {
    throw error instanceof ToolError ? error : fromErrno(error, filePath);
  } finally {
    closeSync(fd);
  }
}

/** `pread` of `length` bytes at `position` into `buffer` from `offset`; on the thread pool unless `sync`. */
function readAt(
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number,
  sync: boolean,
): Promise<number> | number {
  if (sync) return readSync(fd, buffer, offset, length, position);
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, position, (error, bytesRead) => {
      if (error) reject(error);
      else resolve(bytesRead);
    });
  });
}

/**
 * Read a file whose size `fstat` gave. One read of `size + 1` bytes both gets the file and shows it
 * did not grow since (a short read at or past `size` is the end of the file), so a file that kept
 * its size costs a single read, as in `fs.readFile`. A file that grew meanwhile is read on to its
 * end, up to the limit. Returns a view of a buffer of `spare`, holding exactly the file's bytes.
 */
async function readWhole(
  fd: number,
  size: number,
  maxFileBytes: number,
  filePath: string,
  spare: SpareBuffer,
): Promise<Buffer> {
  let buffer = spare.take(size + 1);
  let length = 0;
  try {
    for (;;) {
      if (length === buffer.length) {
        // The file grew past what it held when it was opened: make room and read on.
        if (length > maxFileBytes) break;
        const grown = Buffer.allocUnsafeSlow(
          Math.min(Math.max(buffer.length * 2, 64 * 1024), maxFileBytes + 1),
        );
        buffer.copy(grown, 0, 0, length);
        spare.giveBack(buffer);
        buffer = grown;
      }
      // The file as fstat saw it and one byte more; past that (it grew), what the buffer holds.
      const wanted = length <= size ? size + 1 - length : buffer.length - length;
      const bytesRead = await readAt(fd, buffer, length, wanted, length, wanted <= SYNC_READ_BYTES);
      length += bytesRead;
      // A read that stops short at or past the size fstat gave is the end of the file. One that
      // stops before it (the file shrank, or a file system that returns short reads) reads on
      // until a read returns nothing.
      if (bytesRead === 0 || (bytesRead < wanted && length >= size)) break;
    }
  } catch (error) {
    spare.giveBack(buffer);
    throw error;
  }
  if (length > maxFileBytes) {
    spare.giveBack(buffer);
    throw new ToolError(
      "TOO_LARGE",
      `${filePath} grew past the ${maxFileBytes} bytes this sandbox reads`,
    );
  }
  return buffer.subarray(0, length);
}

/** Throw the refusal of a write to `confined` in `mode`, if it is refused. */
export function refuseWrite(mode: SandboxMode, confined: ConfinedPath): void {
  if (mode === "read-only") {
    throw new ToolError("READ_ONLY", `the read-only sandbox refuses writes: ${confined.requested}`);
  }
  if (mode === "danger-full-access") return;
  const reason = protectedReason(confined.relative);
  if (reason !== undefined) {
    throw new ToolError("PROTECTED_PATH", `refusing to write ${confined.requested}: ${reason}`);
  }
}

/**
 * Write `bytes` to `confined` (whose write was allowed) through a temporary file in the target's
 * own folder, then rename it over the target, so a reader sees the old bytes or the new ones,
 * never half. The temporary file is created exclusively (never through a link); the rename
 * replaces the final path segment itself, never a link's target. The target's mode (and owner,
 * when running as root) is kept. Failures are thrown as ToolErrors naming `filePath`.
 */
export async function writeConfinedFile(
  confined: ConfinedPath,
  filePath: string,
  bytes: Uint8Array,
): Promise<void> {
  try {
    await writeAtomically(confined, bytes);
  } catch (error) {
    throw error instanceof ToolError ? error : fromErrno(error, filePath);
  }
}

async function writeAtomically(confined: ConfinedPath, bytes: Uint8Array): Promise<void> {
  const target = confined.real;
  let mode = 0o666;
  let owner: { uid: number; gid: number } | undefined;
  if (confined.exists) {
    const info = await stat(target);
    if (info.isDirectory()) {
      throw new ToolError("NOT_A_FILE", `is a folder, not a file: ${confined.requested}`);
    }
    if (!info.isFile()) {
      throw new ToolError("NOT_A_FILE", `not a regular file: ${confined.requested}`);
    }
    mode = info.mode & 0o7777;
    owner = { uid: info.uid, gid: info.gid };
  } else {
    await mkdir(path.dirname(target), { recursive: true });
  }
  const temporary = path.join(
    path.dirname(target),
    `.${path.basename(target).slice(0, 100)}.pleach-${randomBytes(6).toString("hex")}.tmp`,
  );
  const handle = await open(temporary, "wx", mode);
  try {
    try {
      await handle.writeFile(bytes);
      if (confined.exists) {
        // open() applied the umask; restore the exact bits the file had.
        await handle.chmod(mode);
        if (owner !== undefined && process.getuid?.() === 0) {
          await handle.chown(owner.uid, owner.gid);
        }
      }
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}
