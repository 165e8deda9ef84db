import { ToolError } from "../errors.js";
import type { ExecOptions, FileEncodingOptions } from "./contract.js";

/**
 * The checks every client applies to the options a caller passes, so each vendor refuses the same
 * bad input with the same `INVALID_INPUT` message before doing any work.
 */

/** A file encoding a client accepts. */
export type FileEncoding = NonNullable<FileEncodingOptions["encoding"]>;

/** The caller's encoding (default `"utf8"`), or `INVALID_INPUT` for any other value. */
export function fileEncodingOf(options: FileEncodingOptions | undefined): FileEncoding {
  const encoding = options?.encoding ?? "utf8";
  if (encoding !== "utf8" && encoding !== "base64") {
    throw new ToolError(
      "INVALID_INPUT",
      `encoding must be "utf8" or "base64", got ${JSON.stringify(encoding)}`,
    );
  }
  return encoding;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Refuse `writeFile` content that is not a string, or, for `"base64"`, not base64 (whitespace is
 * ignored, as decoders ignore it).
 */
export function checkFileContent(content: unknown, encoding: FileEncoding): void {
  if (typeof content !== "string") {
    throw new ToolError("INVALID_INPUT", `content must be a string, got ${typeof content}`);
  }
  if (encoding === "base64" && !BASE64.test(content.replace(/\s+/g, ""))) {
    throw new ToolError("INVALID_INPUT", "content is not valid base64");
  }
}

/** Refuse a `timeoutMs` that is not a positive number (`undefined` means the client's default). */
export function checkTimeoutMs(timeoutMs: unknown): void {
  if (timeoutMs === undefined) return;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ToolError("INVALID_INPUT", `timeoutMs must be a positive number, got ${timeoutMs}`);
  }
}

/** Refuse a `maxOutputBytes` that is not an integer of at least 2 (a head and a tail byte). */
export function checkMaxOutputBytes(maxOutputBytes: unknown): void {
  if (maxOutputBytes === undefined) return;
  if (!Number.isInteger(maxOutputBytes) || (maxOutputBytes as number) < 2) {
    throw new ToolError(
      "INVALID_INPUT",
      `maxOutputBytes must be an integer >= 2, got ${maxOutputBytes}`,
    );
  }
}

/** Refuse an `env` that is not an object of strings with valid names and no NUL bytes. */
export function checkEnvironment(env: unknown): void {
  if (env === undefined) return;
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

/** Apply the checks above to the options of one `exec` call. */
export function checkExecOptions(options: ExecOptions | undefined): void {
  if (options === undefined) return;
  checkTimeoutMs(options.timeoutMs);
  checkMaxOutputBytes(options.maxOutputBytes);
  checkEnvironment(options.env);
  if (
    options.fullOutputOverBytes !== undefined &&
    (!Number.isInteger(options.fullOutputOverBytes) || options.fullOutputOverBytes < 0)
  ) {
    throw new ToolError(
      "INVALID_INPUT",
      `fullOutputOverBytes must be an integer >= 0, got ${options.fullOutputOverBytes}`,
    );
  }
  if (options.stdin !== undefined && typeof options.stdin !== "string") {
    throw new ToolError("INVALID_INPUT", "stdin must be a string");
  }
}
