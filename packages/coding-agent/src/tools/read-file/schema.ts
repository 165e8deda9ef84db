import { z } from "zod";

/** The input of `read_file`. */
export const readFileInputSchema = z
  .object({
    path: z
      .string()
      .min(1)
      .describe("The file to read, relative to the workspace root (e.g. `src/index.ts`)."),
    encoding: z
      .enum(["utf8", "base64"])
      .optional()
      .describe(
        'How to return the bytes: "utf8" (default) for text, "base64" for binary files (images, archives, anything read_file refuses as binary). base64 always returns the whole file.',
      ),
    offset: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "utf8 only: the 1-based line number to start reading at (default 1). Pass the `nextOffset` of a truncated read to continue.",
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "utf8 only: how many lines to read from `offset`. Default and maximum: the tool's line budget (2,000 lines and 49,000 characters unless configured); a larger value is lowered to it.",
      ),
  })
  .strict();

/** The output of `read_file`. */
export const readFileOutputSchema = z.object({
  content: z
    .string()
    .describe(
      "The file's text exactly as stored (CRLF and byte order mark kept) for the lines returned, or the whole file as base64.",
    ),
  bytes: z
    .number()
    .int()
    .nonnegative()
    .describe(
      "Byte length of the decoded payload: the UTF-8 byte length of `content` (the lines returned), or the file's raw byte length in base64 mode.",
    ),
  encoding: z.enum(["utf8", "base64"]).describe("The encoding of `content`."),
  totalLines: z.number().int().nonnegative().optional().describe("utf8: lines in the whole file."),
  startLine: z.number().int().min(1).optional().describe("utf8: the first line returned."),
  endLine: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe("utf8: the last line returned (startLine - 1 when none was)."),
  nextOffset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("utf8: the `offset` that continues the read; absent at the end of the file."),
  truncated: z
    .boolean()
    .describe(
      "The line or character budget stopped the read early (before `limit` lines, or before the end of the file without a limit), or a long line was cut.",
    ),
  linesCut: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe("utf8: how many returned lines were longer than the line budget and were cut."),
});

/** What `read_file` accepts. */
export type ReadFileInput = z.input<typeof readFileInputSchema>;
/** What `read_file` returns. */
export type ReadFileOutput = z.output<typeof readFileOutputSchema>;
