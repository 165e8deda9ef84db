import { isToolError, ToolError, type ToolErrorCode } from "@pleach/core";
import { sandboxUnavailableError } from "@pleach/core/sandbox";
import { type WireError, wireErrorSchema } from "./protocol.js";

/**
 * A `ToolError` and its wire form (`{ code, message, details? }`), both ways: the server writes
 * what was thrown, the client throws what it read, with the same code and details.
 */

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
  HIDDEN_PATH: true,
  NO_SANDBOX: true,
  NO_MATCH: true,
  AMBIGUOUS_MATCH: true,
  CONFLICT: true,
  SYNTAX_ERROR: true,
  STALE_FILE: true,
  BINARY_FILE: true,
  TOO_LARGE: true,
  TOO_MANY_JOBS: true,
  TIMEOUT: true,
  ABORTED: true,
  COMMAND_FAILED: true,
  PERMISSION_DENIED: true,
  UNSUPPORTED: true,
  INTERNAL: true,
};

function isToolErrorCode(code: unknown): code is ToolErrorCode {
  return typeof code === "string" && Object.hasOwn(CODES, code);
}

/** The wire form of a thrown error: a `ToolError`'s own code, anything else `INTERNAL`. */
export function toWireError(error: unknown): WireError {
  if (isToolError(error)) {
    const wire: WireError = { code: error.code as ToolErrorCode, message: error.message };
    if (error.details !== undefined) wire.details = error.details;
    return wire;
  }
  return {
    code: "INTERNAL",
    message: `the sandbox server failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}

/**
 * The `ToolError` a wire error stands for. With status 503 or 410, or `details.unavailable`, it is
 * a sandbox-unavailable error (`isSandboxUnavailable`), which pools act on; an unknown code is
 * read as `INTERNAL`.
 */
export function toolErrorOf(
  wire: { code?: string; message: string; details?: Record<string, unknown> },
  status?: number,
): ToolError {
  const details = wire.details;
  if (status === 503 || status === 410 || details?.unavailable === true) {
    return sandboxUnavailableError({ message: wire.message, details: { ...details, status } });
  }
  return new ToolError(
    isToolErrorCode(wire.code) ? wire.code : "INTERNAL",
    wire.message,
    details === undefined ? {} : { details },
  );
}

/**
 * The `ToolError` of a non-2xx answer whose body is `text`, from the sandbox server at `where`.
 * A body that is not a pleach error (a proxy's page) says so; from a gateway (502, 503, 504) it is
 * a sandbox-unavailable error.
 */
export function errorOfAnswer(status: number, text: string, where: string): ToolError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Not our server, or a proxy's page: said below.
  }
  const wire = wireErrorSchema.safeParse((body as { error?: unknown } | undefined)?.error);
  if (wire.success) return toolErrorOf(wire.data, status);
  const message = `the sandbox server at ${where} answered HTTP ${status} without a pleach error: ${text.slice(0, 200)}`;
  return status === 502 || status === 503 || status === 504
    ? sandboxUnavailableError({ message, details: { reason: "gateway", status } })
    : new ToolError("INTERNAL", message, { details: { status } });
}
