import { ToolError } from "@pleach/core";

/**
 * The limit a `readFile`'s `maxBytes` asks for, as both clients check it: a whole number of bytes,
 * or `undefined` (none given, or `Infinity`: no limit but the sandbox's own). Anything else is
 * refused with `INVALID_INPUT`, since a `NaN` let through would switch the limit off.
 */
export function readLimitOf(maxBytes: unknown): number | undefined {
  if (maxBytes === undefined || maxBytes === Number.POSITIVE_INFINITY) return undefined;
  if (typeof maxBytes !== "number" || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new ToolError(
      "INVALID_INPUT",
      `maxBytes must be a whole number of bytes, 0 or more, got ${String(maxBytes)}`,
    );
  }
  return maxBytes;
}
