import type { ToolErrorCode } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";

/** The path prefix of every route of the sandbox server's protocol (see PROTOCOL.md). */
export const PROTOCOL_PREFIX = "/v1";

/** How a new sandbox's workspace is filled. */
export type SandboxTemplate =
  | "empty"
  /** A copy of a folder of the server's template root, named relative to it. */
  | { folder: string }
  /** A shallow clone of a git repository, at `ref` (a branch or tag) when given. */
  | { git: string; ref?: string };

/** Body of `POST /v1/sandboxes`. */
export interface CreateSandboxRequest {
  template?: SandboxTemplate;
}

/** Answer of `POST /v1/sandboxes`. */
export interface CreateSandboxResponse {
  id: string;
  /** The workspace root as commands in the sandbox see it. */
  root: string;
}

/** Body of `POST /v1/sandboxes/:id/exec`: the arguments of `SandboxClient.exec` that travel. */
export interface ExecRequest {
  command: string;
  cwd?: string;
  timeoutMs?: number;
  env?: Record<string, string>;
  stdin?: string;
  maxOutputBytes?: number;
}

/** One line of the NDJSON answer of `exec`. */
export type ExecEvent =
  | { type: "stdout" | "stderr"; data: string }
  | { type: "heartbeat" }
  | ({ type: "exit" } & ExecResult)
  | { type: "error"; error: WireError };

/** The error body of every failed request, and of an `error` event. */
export interface WireError {
  code: ToolErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** Every code, as a record so that a code added to `ToolErrorCode` must be added here too. */
const CODES: Record<ToolErrorCode, true> = {
  INVALID_INPUT: true,
  INVALID_OUTPUT: true,
  INVALID_PATH: true,
  PATH_ESCAPE: true,
  NOT_FOUND: true,
  NOT_A_FILE: true,
  NOT_A_DIRECTORY: true,
  READ_ONLY: true,
  PROTECTED_PATH: true,
  NO_SANDBOX: true,
  NO_MATCH: true,
  AMBIGUOUS_MATCH: true,
  CONFLICT: true,
  STALE_FILE: true,
  BINARY_FILE: true,
  TOO_LARGE: true,
  TIMEOUT: true,
  ABORTED: true,
  COMMAND_FAILED: true,
  PERMISSION_DENIED: true,
  UNSUPPORTED: true,
  INTERNAL: true,
};

/** The codes a wire error may carry; anything else is read as `INTERNAL`. */
export const WIRE_ERROR_CODES: ReadonlySet<string> = new Set(Object.keys(CODES));

/** The HTTP status of a request that failed with `code`. */
export function statusOfCode(code: ToolErrorCode): number {
  switch (code) {
    case "NOT_FOUND":
      return 404;
    case "PERMISSION_DENIED":
      return 403;
    case "TOO_LARGE":
      return 413;
    case "INTERNAL":
      return 500;
    case "NO_SANDBOX":
      return 501;
    default:
      return 400;
  }
}

/** The `Upgrade` token of a file channel (see PROTOCOL.md, "File channel"). */
export const FILE_CHANNEL_PROTOCOL = "pleach-file-channel";
/** Where a file channel opens: `GET` with `Connection: Upgrade` and the bearer token. */
export const FILE_CHANNEL_ROUTE = `${PROTOCOL_PREFIX}/file-channel`;
