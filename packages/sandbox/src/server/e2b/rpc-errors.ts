import { Code, ConnectError } from "@connectrpc/connect";
import type { ToolErrorCode } from "@pleach/core";
import { HttpError } from "../http-errors.js";
import { toWireError } from "../wire-errors.js";

/** The Connect code a pleach error code is answered with over envd's RPC. */
function codeOf(code: ToolErrorCode): Code {
  switch (code) {
    case "NOT_FOUND":
      return Code.NotFound;
    case "PATH_ESCAPE":
    case "READ_ONLY":
    case "PROTECTED_PATH":
    case "HIDDEN_PATH":
    case "PERMISSION_DENIED":
      return Code.PermissionDenied;
    case "TOO_LARGE":
    case "TOO_MANY_JOBS":
      return Code.ResourceExhausted;
    case "CONFLICT":
      return Code.FailedPrecondition;
    case "UNSUPPORTED":
      return Code.Unimplemented;
    case "TIMEOUT":
      return Code.DeadlineExceeded;
    case "ABORTED":
      return Code.Aborted;
    case "NO_SANDBOX":
      return Code.Unavailable;
    case "INTERNAL":
    case "INVALID_OUTPUT":
      return Code.Internal;
    default:
      return Code.InvalidArgument;
  }
}

/**
 * The `ConnectError` an RPC handler throws for `error`: a `ToolError`'s message (which says what
 * to do next) with the Connect code of its pleach code, which rides along as `pleach-code` in the
 * error's metadata.
 */
export function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  const wire = error instanceof HttpError ? error.wire : toWireError(error);
  return new ConnectError(wire.message, codeOf(wire.code), { "pleach-code": wire.code });
}

/** The error of an envd call this server does not serve: which, and what to use instead. */
export function notSupported(what: string, instead: string): ConnectError {
  return new ConnectError(
    `${what} is not supported by pleach's E2B face; ${instead}`,
    Code.Unimplemented,
    { "pleach-code": "UNSUPPORTED" },
  );
}
