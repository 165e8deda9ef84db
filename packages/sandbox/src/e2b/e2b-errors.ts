import { ToolError, type ToolErrorCode } from "@pleach/core";
import { sandboxUnavailableError } from "@pleach/core/sandbox";

/** The pleach code of an e2b SDK error, by its class (the SDK names each one). */
const CODES: Record<string, ToolErrorCode> = {
  NotFoundError: "NOT_FOUND",
  FileNotFoundError: "NOT_FOUND",
  InvalidArgumentError: "INVALID_INPUT",
  AuthenticationError: "PERMISSION_DENIED",
  NotEnoughSpaceError: "TOO_LARGE",
  TimeoutError: "TIMEOUT",
  RateLimitError: "INTERNAL",
  TemplateError: "UNSUPPORTED",
};

/** Errors that say the sandbox is gone or out of reach: a pool replaces such a session. */
const UNAVAILABLE = new Set(["SandboxNotFoundError", "ServiceBusyError"]);

/**
 * The `ToolError` an e2b SDK call failed with: pleach's codes for the SDK's error classes, the
 * sandbox-unavailable error (which pools act on) for a sandbox gone, and `what` saying which call.
 */
export function toolErrorOfE2B(error: unknown, what: string): ToolError {
  if (error instanceof ToolError) return error;
  const name = error instanceof Error ? error.name : "";
  const message = error instanceof Error ? error.message : String(error);
  if (UNAVAILABLE.has(name)) {
    return sandboxUnavailableError({
      message: `${what}: the E2B sandbox is gone or out of reach (${message}); acquire a new one`,
      cause: error,
    });
  }
  return new ToolError(CODES[name] ?? "INTERNAL", `${what}: ${message}`, { cause: error });
}
