import { Buffer } from "node:buffer";
import {
  defineTool,
  isToolError,
  MODEL_OUTPUT_LIMIT,
  type PluginToolDefinition,
  ToolError,
} from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../sandbox/index.js";
import { splitLinesKeepingEnds } from "./line-numbers.js";
import { binaryReason, decodeUtf8 } from "./text-format.js";

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

/** Options of {@link createReadFileTool}. */
export interface ReadFileToolOptions {
  /**
   * The most lines one utf8 read returns; a larger `limit` is lowered to it.
   * @default 2_000
   */
  maxLines?: number;
  /**
   * The most characters of text one utf8 read returns (whole lines only; at least one line). Kept
   * below the 50,000-character model cap so the continuation hint always fits.
   * @default 49_000
   */
  maxChars?: number;
  /**
   * Lines longer than this many characters are cut, with a marker saying how much was cut.
   * @default 2_000
   */
  maxLineChars?: number;
  /**
   * The largest file base64 mode returns, in bytes; larger files are refused with `TOO_LARGE`,
   * from their size when the client honours `readFile`'s `maxBytes`, before a byte is read.
   * @default 10_485_760
   */
  maxBase64Bytes?: number;
  /**
   * The largest file utf8 mode reads, in bytes; larger files are refused with `TOO_LARGE` as in
   * base64 mode. Each call reads the whole file to return a window of it, so a larger file costs
   * its size (and its decoded text) in memory per call for what `grep`, `sed -n` or `tail` would
   * answer better. The default is the sandbox server's own file limit, so that a local and a
   * remote sandbox read the same files. `Infinity` leaves only the client's limit.
   * @default 33_554_432
   */
  maxTextBytes?: number;
}

/**
 * `read_file` (seed 000): read a workspace file as UTF-8 text, a window of lines at a time, or
 * whole as base64. Binary files are refused in utf8 mode rather than returned garbled.
 */
export function createReadFileTool(
  client: SandboxClient,
  {
    maxLines = 2_000,
    maxChars = MODEL_OUTPUT_LIMIT - 1_000,
    maxLineChars = 2_000,
    maxBase64Bytes = 10 * 1024 * 1024,
    maxTextBytes = 32 * 1024 * 1024,
  }: ReadFileToolOptions = {},
): PluginToolDefinition<typeof readFileInputSchema, typeof readFileOutputSchema> {
  const limits = { base64: maxBase64Bytes, utf8: maxTextBytes };
  /**
   * The file as `readFile` returns it in `encoding`, the client asked to refuse it from its size
   * when it is over the limit of mode `limitOf`. That refusal is given the words of the check made
   * after reading (for clients that do not honour `maxBytes`), so the model reads the same either way.
   */
  const readWithin = async (
    path: string,
    encoding: "utf8" | "base64",
    limitOf: "utf8" | "base64",
  ): Promise<string> => {
    const maxBytes = limits[limitOf];
    try {
      return await client.readFile(path, {
        encoding,
        ...(Number.isFinite(maxBytes) ? { maxBytes } : {}),
      });
    } catch (error) {
      const bytes =
        isToolError(error) && error.code === "TOO_LARGE" ? error.details?.bytes : undefined;
      // A refusal under a lower limit of the client's own says what that limit is: kept as is.
      if (typeof bytes === "number" && bytes > maxBytes)
        throw tooLarge(path, bytes, limitOf, error);
      throw error;
    }
  };
  const tooLarge = (
    path: string,
    bytes: number,
    mode: "utf8" | "base64",
    cause?: unknown,
  ): ToolError => {
    const size = `${path} has ${bytes.toLocaleString("en-US")} bytes`;
    if (mode === "base64") {
      return new ToolError(
        "TOO_LARGE",
        `${size}; read_file returns at most ${maxBase64Bytes.toLocaleString("en-US")} bytes as base64. Inspect part of it with a command instead (e.g. \`head -c 4096 <file> | xxd\`).`,
        { cause, details: { bytes, maxBase64Bytes } },
      );
    }
    return new ToolError(
      "TOO_LARGE",
      `${size}; read_file reads text files of at most ${maxTextBytes.toLocaleString("en-US")} bytes. Search it or read part of it with a command instead (e.g. \`grep -n PATTERN <file>\`, \`sed -n '1,200p' <file>\` or \`tail -n 200 <file>\`).`,
      { cause, details: { bytes, maxTextBytes } },
    );
  };
  return defineTool({
    name: "read_file",
    description: [
      "Read a file in the workspace. Text comes back exactly as stored (line endings and byte order mark kept), without line numbers.",
      `One call returns at most ${maxLines.toLocaleString("en-US")} lines or ${maxChars.toLocaleString("en-US")} characters; lines longer than ${maxLineChars.toLocaleString("en-US")} characters are cut.`,
      "When a read stops early the result ends with a hint such as `[lines 1-2000 of 9000; call read_file again with offset 2001 to continue]`: pass that offset to read on.",
      'Binary files are refused; read them with encoding "base64" (whole file only).',
    ].join(" "),
    inputSchema: readFileInputSchema,
    outputSchema: readFileOutputSchema,
    annotations: { title: "Read file", readOnlyHint: true, idempotentHint: true },
    files: {
      reads: ({ path }) => [path],
      readKey: ({ encoding = "utf8", offset = 1, limit }) =>
        JSON.stringify([encoding, offset, limit ?? null]),
    },
    async execute({ path, encoding = "utf8", offset, limit }) {
      if (encoding === "base64" && (offset !== undefined || limit !== undefined)) {
        throw new ToolError(
          "INVALID_INPUT",
          'offset and limit apply to encoding "utf8" only; base64 always returns the whole file. Drop offset and limit, or read as utf8.',
        );
      }
      if (encoding === "base64") {
        const bytes = Buffer.from(await readWithin(path, "base64", "base64"), "base64");
        // Checked again: a client may not honour maxBytes.
        if (bytes.byteLength > maxBase64Bytes) throw tooLarge(path, bytes.byteLength, "base64");
        return {
          content: bytes.toString("base64"),
          bytes: bytes.byteLength,
          encoding,
          truncated: false,
        };
      }
      let text = await readWithin(path, "utf8", "utf8");
      // Decoding replaces invalid bytes with U+FFFD; only then (or for a NUL) are the raw bytes
      // needed to tell a binary file from text that really holds those characters.
      if (text.includes("\uFFFD") || text.includes("\0")) {
        const bytes = Buffer.from(await readWithin(path, "base64", "utf8"), "base64");
        if (bytes.byteLength > maxTextBytes) throw tooLarge(path, bytes.byteLength, "utf8");
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
        if (bytes > maxTextBytes) throw tooLarge(path, bytes, "utf8");
      }
      return readLines(text, {
        path,
        offset,
        limit,
        maxLines,
        maxChars,
        maxLineChars,
      });
    },
    toModelOutput(output) {
      if (output.encoding === "base64") {
        return {
          output: `[${output.bytes.toLocaleString("en-US")} bytes as base64]\n${output.content}`,
          error: false,
        };
      }
      const { content, totalLines = 0, startLine = 1, endLine = 0, nextOffset } = output;
      const linesCut = output.linesCut ?? 0;
      const whole = startLine === 1 && nextOffset === undefined && linesCut === 0;
      if (whole) return { output: totalLines === 0 ? "[empty file]" : content, error: false };
      const notes = [`lines ${startLine}-${endLine} of ${totalLines}`];
      notes.push(
        nextOffset === undefined
          ? "end of file"
          : `call read_file again with offset ${nextOffset} to continue`,
      );
      if (linesCut > 0) {
        notes.push(
          `${linesCut} line${linesCut === 1 ? "" : "s"} longer than ${maxLineChars} characters cut`,
        );
      }
      const separator = content === "" || content.endsWith("\n") ? "" : "\n";
      return { output: `${content}${separator}[${notes.join("; ")}]`, error: false };
    },
  });
}

interface ReadLinesOptions {
  path: string;
  offset: number | undefined;
  limit: number | undefined;
  maxLines: number;
  maxChars: number;
  maxLineChars: number;
}

/**
 * Take the window of lines asked for, within the line, character and line-length budgets, in one
 * pass of `indexOf` over the text: lines before the window and after it are only counted, and the
 * window is one slice of the text unless a line in it is cut.
 */
function readLines(
  text: string,
  { path, offset = 1, limit, maxLines, maxChars, maxLineChars }: ReadLinesOptions,
): ReadFileOutput {
  // Without a limit the caller wants the rest of the file: stopping early is a truncation.
  const wanted = limit ?? Number.POSITIVE_INFINITY;
  const lineBudget = Math.min(wanted, maxLines);
  if (offset === 1 && text.length <= maxChars) {
    const whole = wholeTextWithinBudgets(text, lineBudget, maxLineChars);
    if (whole !== undefined) {
      return {
        content: text,
        bytes: Buffer.byteLength(text, "utf8"),
        encoding: "utf8",
        totalLines: whole,
        startLine: 1,
        endLine: whole,
        truncated: false,
      };
    }
  }
  // Walk to the start of line `offset`.
  let start = 0;
  let skipped = 0;
  while (skipped < offset - 1) {
    const newline = text.indexOf("\n", start);
    if (newline === -1) break;
    start = newline + 1;
    skipped += 1;
  }
  if (skipped < offset - 1) {
    throw offsetPastEnd(path, offset, skipped + (start < text.length ? 1 : 0));
  }
  // The window: whole lines from `start`. Lines that fit are not copied one by one; the content
  // is a slice of the text, with `pieces` holding what comes before each cut line.
  const pieces: string[] = [];
  let copiedUpTo = start;
  let characters = 0;
  let returned = 0;
  let linesCut = 0;
  let position = start;
  while (position < text.length && returned < lineBudget) {
    const newline = text.indexOf("\n", position);
    const end = newline === -1 ? text.length : newline + 1;
    let bodyEnd = end;
    if (newline !== -1) {
      bodyEnd = newline;
      // The body excludes the terminator, `\r\n` included.
      if (newline > position && text.charCodeAt(newline - 1) === 13) bodyEnd -= 1;
    }
    let length = end - position;
    let cut: string | undefined;
    if (bodyEnd - position > maxLineChars) {
      const body = text.slice(position, bodyEnd);
      const kept = body.slice(0, keepWholeCharacters(body, maxLineChars));
      cut = `${kept} [... ${(body.length - kept.length).toLocaleString("en-US")} more characters of this line cut]${text.slice(bodyEnd, end)}`;
      length = cut.length;
    }
    if (returned > 0 && characters + length > maxChars) break;
    if (cut !== undefined) {
      pieces.push(text.slice(copiedUpTo, position), cut);
      copiedUpTo = end;
      linesCut += 1;
    }
    characters += length;
    returned += 1;
    position = end;
  }
  let content = text.slice(copiedUpTo, position);
  if (pieces.length > 0) {
    pieces.push(content);
    content = pieces.join("");
  }
  const endLine = offset + returned - 1;
  const totalLines = endLine + countLines(text, position);
  if (offset > Math.max(totalLines, 1)) throw offsetPastEnd(path, offset, totalLines);
  const output: ReadFileOutput = {
    content,
    bytes: Buffer.byteLength(content, "utf8"),
    encoding: "utf8",
    totalLines,
    startLine: offset,
    endLine,
    truncated: (endLine < totalLines && returned < wanted) || linesCut > 0,
  };
  if (endLine < totalLines) output.nextOffset = endLine + 1;
  if (linesCut > 0) output.linesCut = linesCut;
  return output;
}

function offsetPastEnd(path: string, offset: number, totalLines: number): ToolError {
  return new ToolError(
    "INVALID_INPUT",
    `offset ${offset} is past the end of ${path}, which has ${totalLines} line${totalLines === 1 ? "" : "s"}. Use an offset from 1 to ${Math.max(totalLines, 1)}.`,
    { details: { offset, totalLines } },
  );
}

/**
 * Lines in `text` from index `from` (a line start) on, as {@link splitLinesKeepingEnds} counts
 * them: a final unterminated line counts.
 */
function countLines(text: string, from: number): number {
  if (from >= text.length) return 0;
  let lines = 0;
  for (let index = text.indexOf("\n", from); index !== -1; index = text.indexOf("\n", index + 1)) {
    lines += 1;
  }
  return text.charCodeAt(text.length - 1) === 10 ? lines : lines + 1;
}

/**
 * The line count of `text` when all of it fits the line budgets (so it can be returned as it is,
 * with no splitting), or `undefined` when it does not; the caller checked the character budget.
 * One pass of `indexOf`, no allocation.
 */
function wholeTextWithinBudgets(
  text: string,
  maxLines: number,
  maxLineChars: number,
): number | undefined {
  // No line can be longer than the text: then only the lines need counting.
  if (text.length <= maxLineChars) {
    const lines = countLines(text, 0);
    return lines <= maxLines ? lines : undefined;
  }
  let lines = 0;
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline + 1;
    if (end - start > maxLineChars) {
      // The body excludes the terminator, `\r\n` included, as the line cut does.
      const bodyLength =
        newline === -1
          ? end - start
          : newline - start - (newline > start && text.charCodeAt(newline - 1) === 13 ? 1 : 0);
      if (bodyLength > maxLineChars) return undefined;
    }
    lines += 1;
    if (lines > maxLines) return undefined;
    start = end;
  }
  return lines;
}

/** Lower a cut position by one when it would split a surrogate pair. */
function keepWholeCharacters(text: string, length: number): number {
  const code = text.charCodeAt(length - 1);
  return code >= 0xd800 && code <= 0xdbff ? length - 1 : length;
}
