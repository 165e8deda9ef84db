import { defineTool, MODEL_OUTPUT_LIMIT, type PluginToolDefinition, ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { readBase64, readText } from "./content.js";
import { readFileInputSchema, readFileOutputSchema } from "./schema.js";
import { readLines } from "./window.js";

export type { ReadFileInput, ReadFileOutput } from "./schema.js";
export { readFileInputSchema, readFileOutputSchema } from "./schema.js";

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
 * `read_file`, as the specification defines it: read a workspace file as UTF-8 text, a window of
 * lines at a time (see {@link readLines}), or whole as base64. Binary files are refused in utf8
 * mode rather than returned garbled (see {@link readText}).
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
  const limits = { maxBase64Bytes, maxTextBytes };
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
        const bytes = await readBase64(client, path, limits);
        return {
          content: bytes.toString("base64"),
          bytes: bytes.byteLength,
          encoding,
          truncated: false,
        };
      }
      const text = await readText(client, path, limits);
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
