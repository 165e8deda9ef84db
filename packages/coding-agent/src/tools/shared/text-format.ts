import { Buffer, isUtf8 } from "node:buffer";

/** How many leading bytes are searched for a NUL byte, the cheap sign of a binary file. */
const BINARY_SNIFF_BYTES = 8192;

/** The byte order mark as it appears in decoded text. */
export const BYTE_ORDER_MARK = "\uFEFF";

/** Why some bytes are not UTF-8 text, for a tool to put in its refusal. */
export interface BinaryReason {
  /** What was found, as a phrase: `"a NUL byte at byte 12"`. */
  description: string;
  /** The byte offset of the offending byte. */
  byteOffset: number;
}

/**
 * Decide whether `bytes` can be handled as text: `undefined` when they are valid UTF-8 with no
 * NUL byte in the first {@link BINARY_SNIFF_BYTES}, otherwise why not. Validity is checked over
 * the whole buffer, not just its head, because decoding invalid bytes would silently replace them
 * with U+FFFD and a later write would corrupt the file.
 */
export function binaryReason(bytes: Uint8Array): BinaryReason | undefined {
  const nul = bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0);
  if (nul !== -1) return { description: `a NUL byte at byte ${nul}`, byteOffset: nul };
  const invalid = firstInvalidUtf8Offset(bytes);
  if (invalid !== -1) {
    return {
      description: `a byte that is not valid UTF-8 at byte ${invalid}`,
      byteOffset: invalid,
    };
  }
  return undefined;
}

/** Decode UTF-8 bytes that {@link binaryReason} accepted, keeping a byte order mark as U+FEFF. */
export function decodeUtf8(bytes: Uint8Array): string {
  // Buffer's decoder, unlike TextDecoder's default, keeps the BOM, so re-encoding is byte-exact.
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}

/** The offset of the first byte that starts no valid UTF-8 sequence, or -1 when all are valid. */
function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index] ?? 0;
    let length: number;
    let minimum: number;
    if (lead < 0x80) {
      index += 1;
      continue;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
      minimum = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      minimum = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      minimum = 0x10000;
    } else {
      return index;
    }
    if (index + length > bytes.length) return index;
    let codePoint = lead & (0xff >> (length + 1));
    for (let offset = 1; offset < length; offset += 1) {
      const next = bytes[index + offset] ?? 0;
      if ((next & 0xc0) !== 0x80) return index;
      codePoint = (codePoint << 6) | (next & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are all invalid UTF-8.
    if (
      codePoint < minimum ||
      (codePoint >= 0xd800 && codePoint <= 0xdfff) ||
      codePoint > 0x10ffff
    ) {
      return index;
    }
    index += length;
  }
  return -1;
}

/** The line endings a text uses. */
export type LineEnding = "lf" | "crlf" | "mixed" | "none";

/** Which line endings `text` uses: only `\n`, only `\r\n`, both, or no line break at all. */
export function detectLineEnding(text: string): LineEnding {
  let crlf = 0;
  let lf = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
    if (index > 0 && text.charCodeAt(index - 1) === 13) crlf += 1;
    else lf += 1;
    if (crlf > 0 && lf > 0) return "mixed";
  }
  if (crlf > 0) return "crlf";
  return lf > 0 ? "lf" : "none";
}
