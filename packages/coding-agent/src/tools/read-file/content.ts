import { Buffer } from "node:buffer";
import { isToolError, ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { binaryReason, decodeUtf8 } from "../shared/text-format.js";

/** The largest files `read_file` returns, in bytes (`maxBase64Bytes` and `maxTextBytes` of `read_file`'s options). */
export interface ReadLimits {
  /** The largest file base64 mode returns. */
  maxBase64Bytes: number;
  /** The largest file utf8 mode reads; `Infinity` leaves only the client's limit. */
  maxTextBytes: number;
}

/** The whole file's bytes for base64 mode, refused with `TOO_LARGE` over `maxBase64Bytes`. */
export async function readBase64(
  client: SandboxClient,
  path: string,
  limits: ReadLimits,
): Promise<Buffer> {
  const bytes = Buffer.from(await readWithin(client, path, "base64", "base64", limits), "base64");
  // Checked again: a client may not honour maxBytes.
  if (bytes.byteLength > limits.maxBase64Bytes) {
    throw tooLarge(path, bytes.byteLength, "base64", limits);
  }
  return bytes;
}

/**
 * The file's text for utf8 mode, refused with `TOO_LARGE` over `maxTextBytes` and with
 * `BINARY_FILE` when it looks binary rather than returned garbled.
 */
export async function readText(
  client: SandboxClient,
  path: string,
  limits: ReadLimits,
): Promise<string> {
  const { maxTextBytes } = limits;
  let text = await readWithin(client, path, "utf8", "utf8", limits);
  // Decoding replaces invalid bytes with U+FFFD; only then (or for a NUL) are the raw bytes
  // needed to tell a binary file from text that really holds those characters.
  if (text.includes("\uFFFD") || text.includes("\0")) {
    const bytes = Buffer.from(await readWithin(client, path, "base64", "utf8", limits), "base64");
    if (bytes.byteLength > maxTextBytes) throw tooLarge(path, bytes.byteLength, "utf8", limits);
    const binary = binaryReason(bytes);
    if (binary !== undefined) {
      throw new ToolError(
        "BINARY_FILE",
        `${path} looks binary (${binary.description}; ${bytes.byteLength.toLocaleString("en-US")} bytes), so it is not returned as text. Call read_file with encoding "base64" to get its bytes.`,
        { details: { byteOffset: binary.byteOffset, bytes: bytes.byteLength } },
      );
    }
    text = decodeUtf8(bytes);
  } else if (text.length * 3 > maxTextBytes) {
    // Checked again: a client may not honour maxBytes. Text without U+FFFD is valid UTF-8,
    // whose bytes are the file's; under a third of the limit in characters, it cannot be over.
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > maxTextBytes) throw tooLarge(path, bytes, "utf8", limits);
  }
  return text;
}

/**
 * The file as `readFile` returns it in `encoding`, the client asked to refuse it from its size
 * when it is over the limit of mode `limitOf`. That refusal is given the words of the check made
 * after reading (for clients that do not honour `maxBytes`), so the model reads the same either way.
 */
async function readWithin(
  client: SandboxClient,
  path: string,
  encoding: "utf8" | "base64",
  limitOf: "utf8" | "base64",
  limits: ReadLimits,
): Promise<string> {
  const maxBytes = limitOf === "base64" ? limits.maxBase64Bytes : limits.maxTextBytes;
  try {
    return await client.readFile(path, {
      encoding,
      ...(Number.isFinite(maxBytes) ? { maxBytes } : {}),
    });
  } catch (error) {
    const bytes =
      isToolError(error) && error.code === "TOO_LARGE" ? error.details?.bytes : undefined;
    if (typeof bytes === "number" && bytes > maxBytes)
      throw tooLarge(path, bytes, limitOf, limits, error);
    // A refusal under a lower limit of the client's own says what that limit is; the way past
    // it is added.
    if (isToolError(error) && error.code === "TOO_LARGE") {
      throw new ToolError("TOO_LARGE", `${error.message}. ${WAY_PAST[limitOf]}`, {
        cause: error,
        details: error.details,
      });
    }
    throw error;
  }
}

/** What to do instead of reading a file too large for `read_file`, by mode. */
const WAY_PAST = {
  base64: "Inspect part of it with a command instead (e.g. `head -c 4096 <file> | xxd`).",
  utf8: "Search it or read part of it with a command instead (e.g. `grep -n PATTERN <file>`, `sed -n '1,200p' <file>` or `tail -n 200 <file>`).",
} as const;

/** The `TOO_LARGE` refusal of a file of `bytes` bytes in `mode`, saying what to do instead. */
function tooLarge(
  path: string,
  bytes: number,
  mode: "utf8" | "base64",
  { maxBase64Bytes, maxTextBytes }: ReadLimits,
  cause?: unknown,
): ToolError {
  const size = `${path} has ${bytes.toLocaleString("en-US")} bytes`;
  if (mode === "base64") {
    return new ToolError(
      "TOO_LARGE",
      `${size}; read_file returns at most ${maxBase64Bytes.toLocaleString("en-US")} bytes as base64. ${WAY_PAST.base64}`,
      { cause, details: { bytes, maxBase64Bytes } },
    );
  }
  return new ToolError(
    "TOO_LARGE",
    `${size}; read_file reads text files of at most ${maxTextBytes.toLocaleString("en-US")} bytes. ${WAY_PAST.utf8}`,
    { cause, details: { bytes, maxTextBytes } },
  );
}
