import type http from "node:http";
import type { ToolErrorCode } from "@pleach/core";
import type { WireError } from "./protocol.js";
import { toWireError } from "./wire-errors.js";

/** A failure with its own HTTP status (401, 410, 413, 503, ...) and the wire error it answers. */
export class HttpError extends Error {
  readonly status: number;
  readonly wire: WireError;
  constructor(status: number, wire: WireError) {
    super(wire.message);
    this.status = status;
    this.wire = wire;
  }
}

/** The HTTP status of a request that failed with a `ToolError` of `code`. */
function statusOfCode(code: ToolErrorCode): number {
  switch (code) {
    case "NOT_FOUND":
      return 404;
    case "PERMISSION_DENIED":
      return 403;
    case "CONFLICT":
      return 409;
    case "TOO_LARGE":
      return 413;
    case "TOO_MANY_JOBS":
      return 429;
    case "INTERNAL":
      return 500;
    case "NO_SANDBOX":
      return 501;
    default:
      return 400;
  }
}

/** The status and wire error a thrown error is answered with. */
export function answerOf(error: unknown): { status: number; wire: WireError } {
  if (error instanceof HttpError) return { status: error.status, wire: error.wire };
  const wire = toWireError(error);
  return { status: statusOfCode(wire.code), wire };
}

/** `400 INVALID_INPUT` with `message`, which says what was wrong and what to send. */
export function badRequest(message: string): HttpError {
  return new HttpError(400, { code: "INVALID_INPUT", message });
}

/** `503`: the server is shutting down. */
export function shuttingDown(): HttpError {
  return new HttpError(503, {
    code: "INTERNAL",
    message: "the sandbox server is shutting down; use another server",
    details: { unavailable: true, reason: "shutdown" },
  });
}

/** `405` for `method` on `pathname`, naming the methods it takes. */
export function methodNotAllowed(
  method: string | undefined,
  pathname: string,
  allowed: string,
): HttpError {
  return new HttpError(405, {
    code: "UNSUPPORTED",
    message: `${method} is not allowed on ${pathname} (only ${allowed})`,
  });
}

/** Answer `body` as JSON, never cached. */
export function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  response.end(text);
}
