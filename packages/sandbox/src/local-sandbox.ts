import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, mkdir, open, realpath, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  SandboxClient,
  SandboxMode,
} from "@pleach/coding-agent/sandbox";
import { ToolError } from "@pleach/core";
import { type CommandWrapper, createCommandWrapper } from "./os/index.js";
import { type ConfinedPath, confinePath, fromErrno } from "./paths.js";
import { protectedReason } from "./protected-paths.js";
import { runProcess } from "./run-process.js";

/** Options of {@link createLocalSandbox}. */
export interface LocalSandboxOptions {
  /** The workspace folder. Must exist. */
  root: string;
  /**
   * What the sandbox allows: `read-only` refuses every write; `workspace-write` writes inside the
   * workspace only; `danger-full-access` confines file paths but runs commands unconfined.
   * @default "workspace-write"
   */
  mode?: SandboxMode;
  /**
   * Whether commands may reach the network (in `danger-full-access` they always can).
   * @default false
   */
  network?: boolean;
  /**
   * Time limit of a command when the call gives none, in milliseconds.
   * @default 600_000
   */
  defaultTimeoutMs?: number;
  /**
   * Bytes kept of each of stdout and stderr when the call gives no `maxOutputBytes`.
   * @default 10_485_760
   */
  defaultMaxOutputBytes?: number;
  /**
   * The largest file `readFile` reads, in bytes; larger files are refused with `TOO_LARGE`.
   * @default 104_857_600
   */
  maxFileBytes?: number;
  /** How commands are confined; by default the host's OS sandbox, probed once. */
  commandWrapper?: CommandWrapper;
}

/** Options of {@link LocalSandbox.exec}: the contract's, and a hook to stream output. */
export interface LocalExecOptions extends ExecOptions {
  /**
   * Called with each piece of output as it is read, decoded as UTF-8, up to `maxOutputBytes` per
   * stream; the result still holds the bounded output as usual.
   */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

/** The local sandbox: a {@link SandboxClient} over a folder of this machine. */
export interface LocalSandbox extends SandboxClient {
  exec(command: string, options?: LocalExecOptions): Promise<ExecResult>;
  /** The workspace root's real path. */
  readonly root: string;
  readonly mode: SandboxMode;
  /** The OS sandbox that confines commands (`"none"` without one). */
  readonly backend: CommandWrapper["backend"];
}

const MAX_TIMER_MS = 2_147_483_647;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Create a {@link SandboxClient} over the folder `root`. File paths are confined to the folder by
 * realpath in every mode; writes are atomic and refused in `read-only`; commands run confined by
 * the OS sandbox, or, without one, only in `danger-full-access`.
 */
export async function createLocalSandbox({
  root,
  mode = "workspace-write",
  network = false,
  defaultTimeoutMs = 600_000,
  defaultMaxOutputBytes = 10 * 1024 * 1024,
  maxFileBytes = 100 * 1024 * 1024,
  commandWrapper = createCommandWrapper(),
}: LocalSandboxOptions): Promise<LocalSandbox> {
  if (!["read-only", "workspace-write", "danger-full-access"].includes(mode)) {
    throw new ToolError("INVALID_INPUT", `unknown sandbox mode ${JSON.stringify(mode)}`);
  }
  const rootGiven = path.resolve(root);
  let rootReal: string;
  try {
    rootReal = await realpath(rootGiven);
  } catch (error) {
    throw fromErrno(error, root);
  }
  if (!(await stat(rootReal)).isDirectory()) {
    throw new ToolError("NOT_A_DIRECTORY", `the workspace root is not a folder: ${root}`);
  }

  const confine = (requested: unknown): Promise<ConfinedPath> =>
    confinePath(rootReal, rootGiven, requested);

  const refuseWrite = (confined: ConfinedPath) => {
    if (mode === "read-only") {
      throw new ToolError(
        "READ_ONLY",
        `the read-only sandbox refuses writes: ${confined.requested}`,
      );
    }
    if (mode === "danger-full-access") return;
    const reason = protectedReason(confined.relative);
    if (reason !== undefined) {
      throw new ToolError("PROTECTED_PATH", `refusing to write ${confined.requested}: ${reason}`);
    }
  };

  return {
    root: rootReal,
    mode,
    backend: commandWrapper.backend,

    async readFile(filePath: string, { encoding = "utf8" }: FileEncodingOptions = {}) {
      checkEncoding(encoding);
      const confined = await confine(nonEmpty(filePath));
      let bytes: Buffer;
      try {
        // One open, then everything through the handle: the checked file is the file read.
        // O_NONBLOCK so that a FIFO planted in the workspace cannot hang the open.
        const handle = await open(confined.real, constants.O_RDONLY | constants.O_NONBLOCK);
        try {
          const info = await handle.stat();
          if (info.isDirectory()) {
            throw new ToolError(
              "NOT_A_FILE",
              `is a folder, not a file: ${filePath} (list it instead)`,
            );
          }
          if (!info.isFile()) throw new ToolError("NOT_A_FILE", `not a regular file: ${filePath}`);
          if (info.size > maxFileBytes) {
            throw new ToolError(
              "TOO_LARGE",
              `${filePath} has ${info.size} bytes, more than the ${maxFileBytes} this sandbox reads`,
            );
          }
          bytes = await readWhole(handle, info.size, maxFileBytes, filePath);
        } finally {
          await handle.close();
        }
      } catch (error) {
        throw error instanceof ToolError ? error : fromErrno(error, filePath);
      }
      return encoding === "base64" ? bytes.toString("base64") : bytes.toString("utf8");
    },

    async writeFile(
      filePath: string,
      content: string,
      { encoding = "utf8" }: FileEncodingOptions = {},
    ) {
      checkEncoding(encoding);
      if (typeof content !== "string") {
        throw new ToolError("INVALID_INPUT", `content must be a string, got ${typeof content}`);
      }
      const confined = await confine(nonEmpty(filePath));
      refuseWrite(confined);
      if (encoding === "base64" && !BASE64.test(content.replace(/\s+/g, ""))) {
        throw new ToolError("INVALID_INPUT", "content is not valid base64");
      }
      const bytes = Buffer.from(content, encoding);
      try {
        await writeAtomically(confined, bytes);
      } catch (error) {
        throw error instanceof ToolError ? error : fromErrno(error, filePath);
      }
    },

    async exec(command: string, options: LocalExecOptions = {}): Promise<ExecResult> {
      if (typeof command !== "string" || command.trim() === "") {
        throw new ToolError("INVALID_INPUT", "exec needs a non-empty command string");
      }
      if (command.includes("\0"))
        throw new ToolError("INVALID_INPUT", "the command contains a NUL byte");
      const {
        cwd = "",
        timeoutMs = defaultTimeoutMs,
        env = {},
        stdin,
        abortSignal,
        maxOutputBytes = defaultMaxOutputBytes,
        onOutput,
      } = options;
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
        throw new ToolError(
          "INVALID_INPUT",
          `timeoutMs must be a positive number, got ${timeoutMs}`,
        );
      }
      if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 2) {
        throw new ToolError(
          "INVALID_INPUT",
          `maxOutputBytes must be an integer >= 2, got ${maxOutputBytes}`,
        );
      }
      checkEnvironment(env);
      if (stdin !== undefined && typeof stdin !== "string") {
        throw new ToolError("INVALID_INPUT", "stdin must be a string");
      }
      const directory = await confine(cwd);
      if (!directory.exists) throw new ToolError("NOT_FOUND", `no such folder: ${cwd}`);
      if (!(await stat(directory.real)).isDirectory()) {
        throw new ToolError("NOT_A_DIRECTORY", `cwd is not a folder: ${cwd}`);
      }
      const invocation = await commandWrapper.invocation({
        command,
        root: rootReal,
        cwd: directory.real,
        mode,
        env,
        network,
      });
      try {
        return await runProcess(invocation, {
          cwd: directory.real,
          stdin,
          timeoutMs: Math.min(timeoutMs, MAX_TIMER_MS),
          abortSignal,
          maxOutputBytes,
          onOutput,
        });
      } finally {
        // The process group is gone by now; undo what the wrapper set up for it.
        await invocation.release?.();
      }
    },
  };
}

/**
 * Read a file whose size `stat` gave into one buffer of that size, then read on in chunks if it
 * grew meanwhile (up to the limit): as few calls and copies as a plain `fs.readFile`.
 */
async function readWhole(
  handle: FileHandle,
  size: number,
  maxFileBytes: number,
  filePath: string,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  let chunk = Buffer.allocUnsafe(size);
  for (;;) {
    let filled = 0;
    while (filled < chunk.length) {
      const { bytesRead } = await handle.read(chunk, filled, chunk.length - filled, total + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > 0) chunks.push(chunk.subarray(0, filled));
    total += filled;
    if (filled < chunk.length && chunk.length > 0) break;
    // The file was at least as long as expected: probe for more.
    if (total > maxFileBytes) {
      throw new ToolError(
        "TOO_LARGE",
        `${filePath} grew past the ${maxFileBytes} bytes this sandbox reads`,
      );
    }
    const probe = Buffer.allocUnsafe(64 * 1024);
    const { bytesRead } = await handle.read(probe, 0, probe.length, total);
    if (bytesRead === 0) break;
    chunks.push(probe.subarray(0, bytesRead));
    total += bytesRead;
    chunk = Buffer.allocUnsafe(64 * 1024);
  }
  if (total > maxFileBytes) {
    throw new ToolError(
      "TOO_LARGE",
      `${filePath} grew past the ${maxFileBytes} bytes this sandbox reads`,
    );
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

function nonEmpty(filePath: unknown): unknown {
  if (filePath === "") throw new ToolError("INVALID_PATH", "the path is empty");
  return filePath;
}

function checkEncoding(encoding: unknown): void {
  if (encoding !== "utf8" && encoding !== "base64") {
    throw new ToolError(
      "INVALID_INPUT",
      `encoding must be "utf8" or "base64", got ${JSON.stringify(encoding)}`,
    );
  }
}

function checkEnvironment(env: unknown): void {
  if (typeof env !== "object" || env === null) {
    throw new ToolError("INVALID_INPUT", "env must be an object of strings");
  }
  for (const [key, value] of Object.entries(env)) {
    if (
      typeof value !== "string" ||
      key === "" ||
      key.includes("=") ||
      `${key}${value}`.includes("\0")
    ) {
      throw new ToolError(
        "INVALID_INPUT",
        `env entry ${JSON.stringify(key)} must be a string without NUL bytes`,
      );
    }
  }
}

/**
 * Write through a temporary file in the target's own folder, then rename it over the target, so a
 * reader sees the old bytes or the new ones, never half. The temporary file is created exclusively
 * (never through a link); the rename replaces the final path segment itself, never a link's target.
 * The target's mode (and owner, when running as root) is kept.
 */
async function writeAtomically(confined: ConfinedPath, bytes: Buffer): Promise<void> {
  const target = confined.real;
  let mode = 0o666;
  let owner: { uid: number; gid: number } | undefined;
  if (confined.exists) {
    const info = await stat(target);
    if (info.isDirectory()) {
      throw new ToolError("NOT_A_FILE", `is a folder, not a file: ${confined.requested}`);
    }
    if (!info.isFile())
      throw new ToolError("NOT_A_FILE", `not a regular file: ${confined.requested}`);
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
        if (owner !== undefined && process.getuid?.() === 0)
          await handle.chown(owner.uid, owner.gid);
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
