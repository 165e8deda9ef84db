import { Buffer } from "node:buffer";
import { isToolError, ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { binaryReason, decodeUtf8 } from "./text-format.js";

/** Options of {@link readTextFile}. */
export interface ReadTextFileOptions {
  /** The tool's name, for the refusal of a binary file. */
  toolName: string;
  /** Appended to the NOT_FOUND message: what the model can do instead (create the file, say). */
  missingHint: string;
}

/**
 * A workspace file's text, read as bytes so that a byte order mark and every line ending survive,
 * and refused as BINARY_FILE when it is not UTF-8: a round trip of other bytes through a string
 * would corrupt the file on the next write.
 */
export async function readTextFile(
  client: SandboxClient,
  path: string,
  { toolName, missingHint }: ReadTextFileOptions,
): Promise<string> {
  let encoded: string;
  try {
    encoded = await client.readFile(path, { encoding: "base64" });
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_FOUND") {
      throw new ToolError("NOT_FOUND", `${error.message}. ${missingHint}`, {
        cause: error,
        details: error.details,
      });
    }
    if (isToolError(error) && error.code === "TOO_LARGE") throw tooLargeToChange(toolName, error);
    throw error;
  }
  const bytes = Buffer.from(encoded, "base64");
  const binary = binaryReason(bytes);
  if (binary !== undefined) {
    throw new ToolError(
      "BINARY_FILE",
      `${path} is not UTF-8 text (${binary.description}), so ${toolName} cannot change it without corrupting it. Replace it whole with write_file and encoding "base64".`,
      { details: { byteOffset: binary.byteOffset } },
    );
  }
  return decodeUtf8(bytes);
}

/**
 * A client's refusal to read a file over its size limit, with the way past it for a tool that
 * changes files: the limit is the sandbox's file reads, and a command changes the file in place.
 */
export function tooLargeToChange(toolName: string, error: ToolError): ToolError {
  return new ToolError(
    "TOO_LARGE",
    `${error.message}. ${toolName} cannot change a file over that limit: change it with a command through bash instead (e.g. \`sed -i 's/old/new/' <file>\`, or \`patch <file> < fix.diff\` with the diff written to fix.diff first).`,
    { cause: error, details: error.details },
  );
}
