/**
 * Every kind of failure a pleach tool or sandbox reports. The code is the machine-readable kind;
 * the message is written for the model that reads it.
 */
export type ToolErrorCode =
  /** The arguments did not match the tool's input schema. */
  | "INVALID_INPUT"
  /** The tool produced a result that does not match its own output schema (a bug in the tool). */
  | "INVALID_OUTPUT"
  /** A path that can never be valid: empty, a NUL byte, not a string. */
  | "INVALID_PATH"
  /** A path that resolves outside the workspace, by `..`, an absolute path or a symlink. */
  | "PATH_ESCAPE"
  /** The file or folder does not exist. */
  | "NOT_FOUND"
  /** A file was expected and something else (a folder, a device) was found. */
  | "NOT_A_FILE"
  /** A folder was expected and something else was found. */
  | "NOT_A_DIRECTORY"
  /** The sandbox is read-only and the call would write. */
  | "READ_ONLY"
  /** The path is protected (the gitdir, shell rc files, agent configuration) and may not be written. */
  | "PROTECTED_PATH"
  /**
   * The path is hidden by the sandbox's read policy (credential stores, `hideReads`): neither
   * commands nor the file tools may read or write it.
   */
  | "HIDDEN_PATH"
  /** No working OS sandbox backend, and the mode is not `danger-full-access`. */
  | "NO_SANDBOX"
  /** `edit_file`'s `old` text does not occur in the file. */
  | "NO_MATCH"
  /** `edit_file`'s `old` text occurs more than once. */
  | "AMBIGUOUS_MATCH"
  /** A diff or edit could not be applied as a whole. */
  | "CONFLICT"
  /** An edit would leave a file with syntax errors it did not have, and the call asked to refuse such edits. */
  | "SYNTAX_ERROR"
  /**
   * A write to an existing file the model has not read in this session, or that changed on disk
   * since it read it; read it again, then redo the change.
   */
  | "STALE_FILE"
  /** The file is binary and was asked for as text. */
  | "BINARY_FILE"
  /** Input or output larger than the tool accepts. */
  | "TOO_LARGE"
  /** A command ran past its time limit. */
  | "TIMEOUT"
  /** A session already runs as many background jobs as its limit allows. */
  | "TOO_MANY_JOBS"
  /** The caller aborted the call. */
  | "ABORTED"
  /** A setup command (such as `git clone`) exited non-zero. */
  | "COMMAND_FAILED"
  /** The operating system refused the operation. */
  | "PERMISSION_DENIED"
  /** The request is well-formed but refused by policy (an `ext::` git URL, say). */
  | "UNSUPPORTED"
  /** Anything else: a bug or an unexpected condition of the host. */
  | "INTERNAL";

/** Options of {@link ToolError}. */
export interface ToolErrorOptions {
  /** The underlying error, kept for debugging; never shown to the model. */
  cause?: unknown;
  /** Structured facts about the failure (resolved path, candidate lines, ...). */
  details?: Record<string, unknown>;
}

/**
 * The one error class of pleach. Tools and sandbox clients throw it for every expected failure;
 * callers branch on `code`, never on the message.
 */
export class ToolError extends Error {
  override readonly name = "ToolError";
  readonly code: ToolErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ToolErrorCode, message: string, { cause, details }: ToolErrorOptions = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.details = details;
  }
}

/** Whether `value` is a {@link ToolError}, also across copies of this package. */
export function isToolError(value: unknown): value is ToolError {
  return (
    value instanceof ToolError ||
    (value instanceof Error &&
      value.name === "ToolError" &&
      typeof (value as { code?: unknown }).code === "string")
  );
}
