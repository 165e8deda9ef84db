import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  lstatSync,
  openSync,
  read,
  renameSync,
  type Stats,
  unlinkSync,
  write,
} from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import type { SandboxMode } from "@pleach/core/sandbox";
import { at, type Located, locate, type WalkedFolder } from "./beneath.js";
import { refuseGitDirectoryWrite } from "./git/git-layout.js";
import { type HiddenPaths, refuseHiddenRead, refuseHiddenWrite } from "./hidden-files.js";
import { fromErrno } from "./paths.js";
import type { WorkspaceProtection } from "./policy/protection.js";
import type { WorkspaceRoot } from "./workspace-root.js";

/**
 * A workspace's files as bytes: what the local client's `readFile` and `writeFile` do under their
 * encodings, and what the sandbox server's file route does with raw bodies, so that both give the
 * same outcomes and codes.
 */

/** Attempts at opening a file whose final name is swapped for a symlink between walk and open. */
const MAX_OPEN_ATTEMPTS = 8;

/** Options of {@link readWorkspaceFile}. */
export interface ReadWorkspaceFileOptions {
  root: WorkspaceRoot;
  /** The path as the caller gave it. */
  filePath: unknown;
  /** The largest file this sandbox reads. */
  maxFileBytes: number;
  /** The most bytes the caller wants, when it says. */
  maxBytes?: number | undefined;
  /**
   * What the sandbox's read policy hides (`hiddenReads`): none in `danger-full-access`. Asked once
   * per read in the workspace scope (in the host scope too for a file of several names), and
   * judged on the real path of the file opened.
   */
  hidden: HiddenPaths;
  /** What is protected in the workspace now; asked only for a hidden file, to name both rules. */
  protection: () => Promise<WorkspaceProtection>;
}

/**
 * The bytes of the workspace file `filePath`. The path is walked from the held root (see `locate`), and the file is opened
 * relative to its held folder with `O_NOFOLLOW`, so the file read is the file checked: refused
 * (`HIDDEN_PATH`) when its real path, read from the descriptor held, lies at or under a hidden
 * path. Its size is checked from `fstat` before a byte is read. Walk, open, fstat and close are
 * synchronous: each takes microseconds on a local file system, a fifth or less of a trip through
 * libuv's thread pool.
 */
export async function readWorkspaceFile({
  root,
  filePath,
  maxFileBytes,
  maxBytes,
  hidden,
  protection,
}: ReadWorkspaceFileOptions): Promise<Buffer> {
  const shown = String(filePath);
  const limit = maxBytes === undefined ? maxFileBytes : Math.min(maxFileBytes, maxBytes);
  const whose = limit < maxFileBytes ? "the caller asked for at most" : "this sandbox reads";
  const { fd, walked } = openWorkspaceFile(root, filePath);
  try {
    await refuseHiddenRead({ root, fd, walked, shown, hidden, protection });
    const info = fstatSync(fd);
    if (info.isDirectory()) {
      throw new ToolError("NOT_A_FILE", `is a folder, not a file: ${shown} (list it instead)`);
    }
    if (!info.isFile()) throw new ToolError("NOT_A_FILE", `not a regular file: ${shown}`);
    if (info.size > limit) {
      throw new ToolError(
        "TOO_LARGE",
        `${shown} has ${info.size} bytes, more than the ${limit} ${whose}`,
        {
          details: { bytes: info.size, maxBytes: limit },
        },
      );
    }
    return await readWhole(fd, info.size, limit, shown, whose);
  } catch (error) {
    throw error instanceof ToolError ? error : fromErrno(error, shown);
  } finally {
    closeSync(fd);
  }
}

/**
 * Open the workspace file `filePath` for reading, race-free, with its path as walked; the caller
 * closes the descriptor.
 */
function openWorkspaceFile(root: WorkspaceRoot, filePath: unknown): { fd: number; walked: string } {
  for (let attempt = 1; ; attempt += 1) {
    const located = locate(root, filePath);
    try {
      if (located.missing.length > 0) throw fromErrno({ code: "ENOENT" }, located.requested);
      if (located.name === "") {
        throw new ToolError(
          "NOT_A_FILE",
          `is a folder, not a file: ${located.requested} (list it instead)`,
        );
      }
      try {
        // O_NONBLOCK so that a FIFO planted in the workspace cannot hang the open.
        const fd = openSync(
          at(root, located.parent, located.name),
          constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW,
        );
        return { fd, walked: path.join(root.real, located.relative) };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Swapped for a symlink or removed since the walk: walk again (it follows links itself).
        if ((code === "ELOOP" || code === "ENOENT") && attempt < MAX_OPEN_ATTEMPTS) continue;
        throw fromErrno(error, located.requested);
      }
    } finally {
      located.close();
    }
  }
}

/**
 * The real path of the existing workspace folder `requested` (the root for `""`), found by the same
 * walk; for where a command starts, which the OS sandbox then confines whatever it is.
 */
export function workspaceFolder(root: WorkspaceRoot, requested: unknown): string {
  const located = locate(root, requested);
  try {
    if (located.missing.length > 0) {
      throw new ToolError("NOT_FOUND", `no such folder: ${located.requested}`);
    }
    if (located.name !== "" && located.target?.isDirectory() !== true) {
      throw new ToolError("NOT_A_DIRECTORY", `not a folder: ${located.requested}`);
    }
    return path.join(root.real, located.relative);
  } finally {
    located.close();
  }
}

/** `pread` of `length` bytes at `position` into `buffer` from `offset`, off the event loop. */
function readAt(
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number,
): Promise<number> {
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
 * end, up to the limit. Returns exactly the file's bytes.
 */
async function readWhole(
  fd: number,
  size: number,
  maxFileBytes: number,
  filePath: string,
  whose: string,
): Promise<Buffer> {
  let buffer = Buffer.allocUnsafe(size + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      // The file grew past what it held when it was opened: make room and read on.
      if (length > maxFileBytes) break;
      const grown = Buffer.allocUnsafeSlow(
        Math.min(Math.max(buffer.length * 2, 64 * 1024), maxFileBytes + 1),
      );
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    // The file as fstat saw it and one byte more; past that (it grew), what the buffer holds.
    const wanted = length <= size ? size + 1 - length : buffer.length - length;
    const bytesRead = await readAt(fd, buffer, length, wanted, length);
    length += bytesRead;
    // A read that stops short at or past the size fstat gave is the end of the file. One that
    // stops before it (the file shrank, or a file system that returns short reads) reads on
    // until a read returns nothing.
    if (bytesRead === 0 || (bytesRead < wanted && length >= size)) break;
  }
  if (length > maxFileBytes) {
    throw new ToolError("TOO_LARGE", `${filePath} grew past the ${maxFileBytes} bytes ${whose}`, {
      details: { bytes: length, maxBytes: maxFileBytes },
    });
  }
  return buffer.subarray(0, length);
}

/** Options of {@link writeWorkspaceFile}. */
export interface WriteWorkspaceFileOptions {
  root: WorkspaceRoot;
  /** The path as the caller gave it. */
  filePath: unknown;
  bytes: Uint8Array;
  mode: SandboxMode;
  /** What is protected in the workspace now; asked once per write outside `danger-full-access`. */
  protection: () => Promise<WorkspaceProtection>;
  /**
   * What the sandbox's read policy hides (`hiddenReads`): none in `danger-full-access`. A write at
   * or under one is refused (`HIDDEN_PATH`), judged on the real path of the folder held (in the
   * workspace scope, all that can apply to it).
   */
  hidden: HiddenPaths;
}

/**
 * Write `bytes` to the workspace file `filePath`: refused in `read-only`, and outside
 * `danger-full-access` refused on any protected path ({@link WorkspaceProtection}), judged on the
 * path as walked (no symlink in it) and on the identity of every folder held on the way. Missing
 * folders are made relative to their held parents. The bytes go to a temporary file created
 * exclusively in the target's held folder, then renamed over the target there, so a reader sees
 * the old bytes or the new ones, never half, and nothing is written outside the folder that was
 * checked. The target's permission bits (and owner, when running as root) are kept, but not
 * setuid or setgid.
 */
export async function writeWorkspaceFile({
  root,
  filePath,
  bytes,
  mode,
  protection,
  hidden,
}: WriteWorkspaceFileOptions): Promise<void> {
  const shown = String(filePath);
  if (mode === "read-only") {
    throw new ToolError("READ_ONLY", `the read-only sandbox refuses writes: ${shown}`);
  }
  const policy = mode === "danger-full-access" ? undefined : await protection();
  const hiddenPaths = hidden("workspace");
  const refuseHidden = (located: Located) => refuseHiddenWrite(root, located, shown, hiddenPaths);
  // Judge the path before anything is made for it, then again on the walk that makes its folders.
  const probe = locate(root, filePath);
  try {
    refuseProtected(policy, probe);
    refuseHidden(probe);
    if (policy !== undefined) refuseGitDirectoryWrite(root, probe);
  } finally {
    probe.close();
  }
  for (let attempt = 1; ; attempt += 1) {
    const located = locate(root, filePath, {
      create: true,
      beforeCreate: (relative, folders) => refuseRule(policy, shown, relative, folders),
    });
    try {
      refuseProtected(policy, located);
      refuseHidden(located);
      const outcome = await replaceFile(root, located, bytes);
      if (outcome === "written") return;
      if (attempt >= MAX_OPEN_ATTEMPTS) {
        throw new ToolError(
          "CONFLICT",
          `the path kept changing while it was written: ${shown}; try again once nothing else changes it`,
        );
      }
    } catch (error) {
      throw error instanceof ToolError ? error : fromErrno(error, shown);
    } finally {
      located.close();
    }
  }
}

/** Throw `PROTECTED_PATH` when `policy` protects the located path or a folder held on the way. */
function refuseProtected(policy: WorkspaceProtection | undefined, located: Located): void {
  if (located.name === "" && located.missing.length === 0) {
    throw new ToolError("NOT_A_FILE", `is a folder, not a file: ${located.requested}`);
  }
  refuseRule(policy, located.requested, located.relative, located.folders, located.target);
}

/**
 * Throw `PROTECTED_PATH` when `policy` protects `relative` (as walked), a folder passed to reach
 * it, or the existing target.
 */
function refuseRule(
  policy: WorkspaceProtection | undefined,
  requested: string,
  relative: string,
  folders: readonly WalkedFolder[],
  target?: Stats,
): void {
  if (policy === undefined) return;
  let rule = policy.ruleFor(relative);
  for (const folder of folders) {
    rule ??= folder.isRoot ? undefined : policy.ruleForIdentity(folder.device, folder.inode);
  }
  if (target !== undefined) rule ??= policy.ruleForIdentity(target.dev, target.ino);
  if (rule !== undefined) {
    throw new ToolError("PROTECTED_PATH", `refusing to write ${requested}: ${rule}`, {
      details: { rule, path: relative },
    });
  }
}

/**
 * Replace the final name of `located` (whose folders all exist) with `bytes`; `"changed"` when the
 * name became a symlink since the walk, so the caller walks again.
 */
async function replaceFile(
  root: WorkspaceRoot,
  located: Located,
  bytes: Uint8Array,
): Promise<"written" | "changed"> {
  const name = located.name === "" ? located.missing[located.missing.length - 1] : located.name;
  if (name === undefined || (located.name === "" && located.missing.length !== 1)) {
    return "changed";
  }
  const folder = located.parent;
  const current = lstatSync(at(root, folder, name), { throwIfNoEntry: false });
  if (current?.isSymbolicLink()) return "changed";
  if (current?.isDirectory()) {
    throw new ToolError("NOT_A_FILE", `is a folder, not a file: ${located.requested}`);
  }
  if (current !== undefined && !current.isFile()) {
    throw new ToolError("NOT_A_FILE", `not a regular file: ${located.requested}`);
  }
  // The file's permission bits are kept, but never setuid or setgid: a program the model wrote
  // must not run with its owner's rights.
  const mode = current === undefined ? 0o666 : current.mode & 0o1777;
  const temporary = `.${leadingBytes(name, 100)}.pleach-${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(
    at(root, folder, temporary),
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    try {
      await writeAll(fd, bytes);
      if (current !== undefined) {
        // open() applied the umask; restore the exact bits the file had.
        fchmodSync(fd, mode);
        if (process.getuid?.() === 0) fchownSync(fd, current.uid, current.gid);
      }
    } finally {
      closeSync(fd);
    }
    renameSync(at(root, folder, temporary), at(root, folder, name));
  } catch (error) {
    try {
      unlinkSync(at(root, folder, temporary));
    } catch {
      // Renamed already, or never made.
    }
    throw error;
  }
  return "written";
}

/** The longest start of `text` that is at most `limit` bytes in UTF-8 (names are limited in bytes). */
function leadingBytes(text: string, limit: number): string {
  let bytes = 0;
  let end = 0;
  for (const character of text) {
    bytes += Buffer.byteLength(character);
    if (bytes > limit) break;
    end += character.length;
  }
  return text.slice(0, end);
}

/** Write all of `bytes` to `fd`, off the event loop. */
async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    offset += await new Promise<number>((resolve, reject) => {
      write(fd, bytes, offset, bytes.length - offset, null, (error, written) => {
        if (error) reject(error);
        else resolve(written);
      });
    });
  }
}
