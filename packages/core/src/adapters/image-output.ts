/** An image a tool returned, for the adapters whose wire carries images to the model. */
export interface ToolImage {
  /** The image's bytes as base64. */
  data: string;
  /** Its IANA media type, from its first bytes: `image/png`, `image/jpeg`, `image/gif`, `image/webp`. */
  mediaType: string;
}

const SIGNATURES: ReadonlyArray<{ mediaType: string; bytes: readonly number[]; at?: number }> = [
  { mediaType: "image/png", bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { mediaType: "image/jpeg", bytes: [0xff, 0xd8, 0xff] },
  { mediaType: "image/gif", bytes: [0x47, 0x49, 0x46, 0x38] },
  { mediaType: "image/webp", bytes: [0x57, 0x45, 0x42, 0x50], at: 8 },
];

/**
 * The image in a tool's output, when the output is a file's bytes as base64 (`{ encoding:
 * "base64", content }`, as `read_file` returns them) and those bytes begin like a PNG, JPEG, GIF
 * or WebP image; otherwise `undefined`. The media type comes from the bytes, never from a name.
 */
export function toolImageOf(output: unknown): ToolImage | undefined {
  if (typeof output !== "object" || output === null) return undefined;
  const { encoding, content } = output as { encoding?: unknown; content?: unknown };
  if (encoding !== "base64" || typeof content !== "string") return undefined;
  const head = Buffer.from(content.slice(0, 24), "base64");
  const match = SIGNATURES.find(({ bytes, at = 0 }) =>
    bytes.every((byte, index) => head[at + index] === byte),
  );
  return match === undefined ? undefined : { data: content, mediaType: match.mediaType };
}
