import { isToolError, ToolError } from "../errors.js";

/**
 * Make the error a sandbox client throws when its sandbox cannot be reached or went away mid-call
 * (the server stopped, the connection broke, the sandbox was destroyed). It is a `ToolError`
 * `INTERNAL` marked `details.unavailable`, so pools and composites can tell it from the tool's own
 * errors: the call may be retried elsewhere, or the session replaced.
 */
export function sandboxUnavailableError({
  message,
  cause,
  details = {},
}: {
  /** What failed, written for the model: what happened and what to do next. */
  message: string;
  cause?: unknown;
  details?: Record<string, unknown>;
}): ToolError {
  return new ToolError("INTERNAL", message, {
    cause,
    details: { ...details, unavailable: true },
  });
}

/** Whether `error` says the sandbox could not be reached (see {@link sandboxUnavailableError}). */
export function isSandboxUnavailable(error: unknown): error is ToolError {
  return isToolError(error) && error.details?.unavailable === true;
}
