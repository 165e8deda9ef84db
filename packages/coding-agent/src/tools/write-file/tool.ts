import { Buffer } from "node:buffer";
import { defineTool, isToolError, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import {
  readPreviousText,
  rejectSyntaxErrorsDescription,
  SYNTAX_CHECK_DESCRIPTION,
  syntaxCheckBeforeWrite,
  syntaxCheckUnavailableSchema,
  syntaxErrorNotes,
  syntaxErrorsSchema,
} from "../syntax/syntax-check.js";

/** The input of `write_file`. */
export const writeFileInputSchema = z
  .object({
    path: z
      .string()
      .min(1)
      .describe(
        "The file to write, relative to the workspace root. Missing parent folders are created.",
      ),
    content: z
      .string()
      .describe(
        "The complete new content of the file; it replaces whatever the file held. Written exactly as given: include the final newline and the line endings you want.",
      ),
    encoding: z
      .enum(["utf8", "base64"])
      .optional()
      .describe('"utf8" (default): `content` is text. "base64": `content` is base64 of raw bytes.'),
    rejectSyntaxErrors: z.boolean().optional().describe(rejectSyntaxErrorsDescription("write")),
  })
  .strict();

/** The output of `write_file`. */
export const writeFileOutputSchema = z.object({
  bytesWritten: z.number().int().nonnegative().describe("The number of bytes the file now holds."),
  path: z.string().describe("The path as given."),
  created: z
    .boolean()
    .optional()
    .describe("Whether the file did not exist before; absent when that could not be told."),
  syntaxErrors: syntaxErrorsSchema,
  syntaxCheckUnavailable: syntaxCheckUnavailableSchema,
});

/** What `write_file` accepts. */
export type WriteFileInput = z.input<typeof writeFileInputSchema>;
/** What `write_file` returns. */
export type WriteFileOutput = z.output<typeof writeFileOutputSchema>;

/** Options of {@link createWriteFileTool}. */
export interface WriteFileToolOptions {
  /**
   * Whether to find out, before writing, if the file is new (`created` in the output), so the model
   * notices a mistyped path. Costs one read of the existing file through the client.
   * @default true
   */
  detectCreated?: boolean;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * `write_file`: write a whole workspace file, from text or base64. `bytesWritten` is
 * computed here, before the sandbox call, so it holds for clients whose `writeFile` returns nothing.
 * Refusals (read-only sandbox, protected path, escaping path) come from the client as `ToolError`s.
 */
export function createWriteFileTool(
  client: SandboxClient,
  { detectCreated = true }: WriteFileToolOptions = {},
): PluginToolDefinition<typeof writeFileInputSchema, typeof writeFileOutputSchema> {
  return defineTool({
    name: "write_file",
    description: [
      "Create a file or replace its whole content. Parent folders are created.",
      "The content is written exactly as given (no newline added or line endings changed).",
      "To change part of an existing file, prefer edit_file, which keeps everything else intact.",
      'For binary files pass base64 with encoding "base64".',
      SYNTAX_CHECK_DESCRIPTION,
    ].join(" "),
    inputSchema: writeFileInputSchema,
    outputSchema: writeFileOutputSchema,
    annotations: {
      title: "Write file",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    },
    files: { writes: ({ path }) => [path] },
    async execute({ path, content, encoding = "utf8", rejectSyntaxErrors }) {
      let bytesWritten: number;
      if (encoding === "base64") {
        if (!BASE64.test(content.replace(/\s+/g, ""))) {
          throw new ToolError(
            "INVALID_INPUT",
            "content is not valid base64 (only A-Z, a-z, 0-9, +, / and trailing = are allowed). Send base64 of the bytes, or use encoding utf8 for text.",
          );
        }
        // Decoded rather than estimated from the length, which whitespace in the base64 would skew.
        bytesWritten = Buffer.from(content, "base64").byteLength;
      } else {
        bytesWritten = Buffer.byteLength(content, "utf8");
      }
      const created = detectCreated ? await isNewFile(client, path) : undefined;
      // Text only: base64 content is taken for bytes, not code.
      const syntax =
        encoding === "utf8"
          ? await syntaxCheckBeforeWrite(
              { toolName: "write_file", what: "write", reject: rejectSyntaxErrors },
              [
                {
                  path,
                  before: created === true ? "" : await readPreviousText(client, path),
                  after: content,
                },
              ],
            )
          : {};
      try {
        await client.writeFile(path, content, { encoding });
      } catch (error) {
        throw isToolError(error) && error.code === "TOO_LARGE"
          ? tooLargeToWrite(path, bytesWritten, error)
          : error;
      }
      return created === undefined
        ? { bytesWritten, path, ...syntax }
        : { bytesWritten, path, created, ...syntax };
    },
    toModelOutput({ path, bytesWritten, created, syntaxErrors, syntaxCheckUnavailable }) {
      const what = created === true ? "created" : "wrote";
      return {
        output: [
          `${what} ${path} (${bytesWritten.toLocaleString("en-US")} bytes)`,
          ...syntaxErrorNotes("The write", syntaxErrors, syntaxCheckUnavailable),
        ].join("\n"),
        error: false,
      };
    },
  });
}

/** Whether `path` does not exist yet; `undefined` when the probe fails for another reason. */
async function isNewFile(client: SandboxClient, path: string): Promise<boolean | undefined> {
  try {
    await client.readFile(path, { encoding: "base64" });
    return false;
  } catch (error) {
    if (!isToolError(error)) return undefined;
    if (error.code === "NOT_FOUND") return true;
    if (error.code === "TOO_LARGE") return false;
    // The write that follows reports whatever is wrong with the path in its own words.
    return undefined;
  }
}

/**
 * A client's refusal of content over its size limit (a sandbox server's request limit), with the
 * way past it: the limit is the sandbox's, so the file is written in parts.
 */
function tooLargeToWrite(path: string, bytes: number, error: ToolError): ToolError {
  return new ToolError(
    "TOO_LARGE",
    `write_file could not write ${path} (${bytes.toLocaleString("en-US")} bytes): ${error.message}. Write it in parts under that limit: write_file the first part to ${path} and each other part to a file of its own, then append those with bash (\`cat part2.txt >> ${path} && rm part2.txt\`); or ask the user to raise the sandbox's limit.`,
    { cause: error, details: { ...error.details, bytes } },
  );
}
