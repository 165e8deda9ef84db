import { z } from "zod";
import { type ExecResult, type KeptOutput, NETWORK_OFF_NOTE_START } from "../../sandbox/index.js";
import { shellQuote } from "./shell-quote.js";

/**
 * What the tools that run commands (bash, run_tests, git_clone) tell the model beyond what the
 * command printed: the sandbox's own notes on the result (`sandboxNotes`: a protected path,
 * read-only mode, a hidden file, the network off, a refused domain) and where a cut output is kept
 * whole (`fullOutput`), each rendered one way by every tool, and the private `/tmp` that
 * git_clone's argument can trip on.
 */

/** The sandbox's notes on `result`, one `[...]` line each; none when it has none. */
export function sandboxNoteLines(result: Pick<ExecResult, "sandboxNotes">): string[] {
  return (result.sandboxNotes ?? []).map((note) => `[${note}]`);
}

/**
 * Whether the sandbox's notes on `result` say the network is off for commands: then a larger time
 * limit is no way out for a command that was killed at it while waiting on the network.
 */
export function networkOffNoted(result: Pick<ExecResult, "sandboxNotes">): boolean {
  return result.sandboxNotes?.some((note) => note.startsWith(NETWORK_OFF_NOTE_START)) === true;
}

/** Where a command's whole output was kept, as the tools that run commands return it. */
export const keptOutputSchema = z
  .object({
    path: z
      .string()
      .describe(
        "Its absolute path inside the sandbox (/run/pleach-output/NAME), outside the workspace: read_file reads it, and so do the sandbox's commands (cat, grep).",
      ),
    bytes: z.number().int().nonnegative().describe("Bytes kept there."),
    droppedBytes: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Bytes past the session's bound on kept output, not kept."),
  })
  .describe(
    "When the output was longer than the result holds and the sandbox keeps whole outputs: where the whole of it (stdout and stderr as they came) can be read with read_file and searched with grep in bash.",
  );

/**
 * The line that says where a cut output is kept whole, and how to read it; none when the output
 * was not cut or was not kept.
 */
export function fullOutputNoteLines({
  cut,
  fullOutput,
}: {
  /** Whether the result the model sees lacks part of the output. */
  cut: boolean;
  fullOutput: KeptOutput | undefined;
}): string[] {
  if (!cut || fullOutput === undefined) return [];
  const { path, bytes, droppedBytes } = fullOutput;
  const kept =
    droppedBytes === undefined
      ? `${bytes.toLocaleString("en-US")} bytes kept`
      : `its first ${bytes.toLocaleString("en-US")} bytes kept (${droppedBytes.toLocaleString("en-US")} more were past the session's bound on kept output)`;
  return [
    `[full output: ${kept} at ${path} — read_file with offset/limit, or search it with bash: grep -n PATTERN ${path.includes("\0") ? JSON.stringify(path) : shellQuote(path)}]`,
  ];
}

/** `/tmp` itself or a path under it: `/tmp`, `/tmp/x`. */
export function isUnderTmp(path: string): boolean {
  return path === "/tmp" || path.startsWith("/tmp/");
}

/** Why a path under `/tmp` that exists on the host is missing for a sandboxed command. */
export const PRIVATE_TMP_HINT =
  "Sandboxed commands see a private, empty /tmp of their own, not the host's, so a repository under the host's /tmp is not there for them. Put it inside the workspace or in another folder the sandbox can read (such as /var/tmp), then clone from there.";
