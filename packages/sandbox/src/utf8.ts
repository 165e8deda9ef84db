import * as nodeBuffer from "node:buffer";

const { isAscii, isUtf8 } = nodeBuffer;
/** ICU's transcoder: missing from a Node built without ICU (`--without-intl`). */
const transcode = (nodeBuffer as { transcode?: typeof nodeBuffer.transcode }).transcode;

/**
 * The text of `bytes` read as UTF-8, exactly as `bytes.toString("utf8")` gives it, but faster:
 *
 * - ASCII is read as Latin-1, which is the same text and only a copy;
 * - other valid UTF-8 is transcoded to UTF-16 by ICU and read as that: for 5 MB of search output
 *   with a few thousand non-ASCII lines, 2–3 ms against 15–20 ms for Node's UTF-8 decoder (valid
 *   UTF-8 has one UTF-16 form, so the text is the same);
 * - invalid UTF-8 goes to Node's decoder, whose U+FFFD replacements stay the rule.
 */
export function decodeUtf8(bytes: Buffer): string {
  if (isAscii(bytes)) return bytes.toString("latin1");
  if (transcode !== undefined && isUtf8(bytes)) {
    try {
      return transcode(bytes, "utf8", "utf16le").toString("utf16le");
    } catch {
      // An ICU without this converter: Node's decoder below.
    }
  }
  return bytes.toString("utf8");
}
