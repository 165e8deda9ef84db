/**
 * The sandbox contract: the three methods every vendor's client satisfies, their options and
 * results, and the providers that hand out sessions. This module and `unavailable.ts` import
 * nothing at run time but `ToolError`, so a vendor package depends on them without the tools.
 */

/**
 * How far a sandbox lets commands and tools write: `read-only` refuses every write;
 * `workspace-write` allows writes inside the workspace (and a private `/tmp`);
 * `danger-full-access` runs commands unconfined.
 */
export type SandboxMode = "read-only" | "workspace-write" | "danger-full-access";

/** Options of {@link SandboxClient.exec}. */
export interface ExecOptions {
  /** Folder to run in, relative to the workspace root (absolute paths inside it are accepted). Default: the root. */
  cwd?: string;
  /** Kill the command (and everything it started) after this many milliseconds. */
  timeoutMs?: number;
  /** Extra environment variables for the command. */
  env?: Record<string, string>;
  /** Text written to the command's standard input; without it, stdin is empty (`/dev/null`). */
  stdin?: string;
  /** Aborting kills the command and everything it started. */
  abortSignal?: AbortSignal;
  /** Bound on the bytes kept of each of stdout and stderr (head and tail); the rest is counted and dropped. */
  maxOutputBytes?: number;
  /**
   * Keep the command's whole output (stdout and stderr interleaved as they came) where `readFile`
   * and the client's commands can read it, when it is longer than this many bytes; the result's
   * `fullOutput` says where. A client without such a place ignores it.
   */
  fullOutputOverBytes?: number;
}

/** Where a command's whole output was kept (see {@link ExecOptions.fullOutputOverBytes}). */
export interface KeptOutput {
  /**
   * Its path as `readFile` and the client's commands take it: for pleach's sandboxes the absolute
   * `/run/pleach-output/NAME`, outside the workspace (in the session sandbox's memory).
   */
  path: string;
  /** Bytes kept there. */
  bytes: number;
  /** Bytes past the session's bound on kept output, not kept (absent when none). */
  droppedBytes?: number;
}

/** The outcome of a command. A non-zero exit is data, not an exception. */
export interface ExecResult {
  /** The exit code, or `null` when the command was ended by a signal. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** The command ran past `timeoutMs` and was killed. */
  timedOut: boolean;
  /** Some output was dropped to stay within `maxOutputBytes`. */
  truncated: boolean;
  /** The signal that ended the command, such as `"SIGKILL"`. */
  signal?: string;
  /** Lines from the sandbox that tie a failure to one of its rules and say the way out. */
  sandboxNotes?: string[];
  /** Where the whole output is kept, when it was asked for and was long enough. */
  fullOutput?: KeptOutput;
}

/** Options of {@link SandboxClient.writeFile}, and those {@link ReadFileOptions} starts from. */
export interface FileEncodingOptions {
  /** `"utf8"` (default) for text, `"base64"` for any bytes. */
  encoding?: "utf8" | "base64";
}

/** Options of {@link SandboxClient.readFile}. */
export interface ReadFileOptions extends FileEncodingOptions {
  /**
   * The most bytes the caller wants. A client that honours it refuses a larger file from its size,
   * before reading it, with a `ToolError` of code `TOO_LARGE` and `details: { bytes, maxBytes }`:
   * the file's size (for a file that grew while it was read: the bytes read so far) and the limit
   * applied, the lower of this one and the client's own. A client that ignores it is still
   * correct: the caller checks the size of what it got as well. Honouring it spares reading and
   * holding a file the caller would only throw away.
   */
  maxBytes?: number;
}

/**
 * The 3-method contract every sandbox vendor satisfies. Paths are relative to the workspace root
 * (absolute paths inside it are accepted) and confined by realpath: an escape is refused with a
 * `ToolError` whose code says so.
 */
export interface SandboxClient {
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  readFile(path: string, options?: ReadFileOptions): Promise<string>;
  writeFile(path: string, content: string, options?: FileEncodingOptions): Promise<void>;
}

/** A sandbox a provider handed out: its client, until `release()`. */
export interface SandboxSession {
  readonly id: string;
  readonly client: SandboxClient;
  /** Give the sandbox back; the client must not be used afterwards. */
  release(): Promise<void>;
}

/**
 * The version of this contract a provider implements (as vercel/ai's `specificationVersion`): a
 * provider written against another one is refused where it is accepted, rather than half working.
 */
export const SANDBOX_SPECIFICATION_VERSION = "v1";

/**
 * How a sandbox's note that the network is off for its commands starts (one of
 * `ExecResult.sandboxNotes`, which reach every face as they are): a tool that finds it on a command
 * killed at its time limit names the network, not a larger timeout, as the way out.
 */
export const NETWORK_OFF_NOTE_START = "sandbox: the network is off for commands here";

/** Hands out sandbox sessions (a pool, a fleet of servers, a composite of several). */
export interface SandboxProvider {
  /** The contract's version it implements: {@link SANDBOX_SPECIFICATION_VERSION}. */
  readonly specificationVersion: typeof SANDBOX_SPECIFICATION_VERSION;
  acquire(options?: { abortSignal?: AbortSignal }): Promise<SandboxSession>;
}
