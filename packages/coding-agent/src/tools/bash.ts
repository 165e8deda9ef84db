import {
  capText,
  defineTool,
  MODEL_OUTPUT_LIMIT,
  type PluginToolDefinition,
  ToolError,
} from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../sandbox/index.js";
import { runInBackground } from "./bash-background.js";
import { jobFailed, jobReadShape, jobStatusShape, renderJobRead } from "./job-state.js";
import { fullOutputNoteLines, keptOutputSchema, sandboxNoteLines } from "./sandbox-hints.js";

/** The longest `timeout` a call may ask for, in milliseconds (ten minutes). */
const BASH_MAX_TIMEOUT_MS = 600_000;

/** The longest `yieldMs` a background call may ask for, in milliseconds. */
const BASH_MAX_YIELD_MS = 30_000;

/** The input of `bash`. */
export const bashInputSchema = z
  .object({
    command: z
      .string()
      .min(1)
      .describe(
        "The shell command to run (POSIX sh). It runs in the workspace root unless `cwd` is given; in the foreground its stdin is empty.",
      ),
    timeout: z
      .number()
      .int()
      .min(1)
      .max(BASH_MAX_TIMEOUT_MS)
      .optional()
      .describe(
        `Time limit in milliseconds (default 60000, at most ${BASH_MAX_TIMEOUT_MS}). The command and everything it started are killed when it runs out. Foreground only: a background job runs until it exits or job_kill stops it.`,
      ),
    cwd: z
      .string()
      .min(1)
      .optional()
      .describe("The folder to run in, relative to the workspace root (default: the root)."),
    background: z
      .boolean()
      .optional()
      .describe(
        "Run the command as a background job that outlives this call: a dev server, a watcher, a REPL, a build longer than one call. The call returns the job's id and its first output, once it has printed something or `yieldMs` has passed; job_output reads on, job_input writes to its stdin, job_kill stops it. Do not end the command with `&`: a job ends when its command exits, and what it left running is killed then. Default false.",
      ),
    yieldMs: z
      .number()
      .int()
      .min(0)
      .max(BASH_MAX_YIELD_MS)
      .optional()
      .describe(
        `With \`background\`: how long to wait for the job's first output before returning, in milliseconds (default 1000, at most ${BASH_MAX_YIELD_MS}).`,
      ),
    pty: z
      .boolean()
      .optional()
      .describe(
        "With `background`: run the job in a pseudo-terminal, for programs that need one: REPLs (`python3 -i`), prompts that read from a terminal, colour and line-buffered output. Its output is then the terminal's: input echoed, `\\r\\n` line ends. Default false.",
      ),
  })
  .strict();

/** The output of `bash`. */
export const bashOutputSchema = z.object({
  output: z
    .string()
    .describe(
      "stdout, then stderr, capped at 50,000 characters (head and tail kept), with `[exit N]` appended on a non-zero exit, a note on a timeout, and the sandbox's notes (`[sandbox: ...]`) when a failure met one of its rules (a protected or read-only path, a hidden file, the network off), each saying the way out.",
    ),
  exitCode: z
    .number()
    .int()
    .nullable()
    .describe("The exit code, or null when a signal ended the command."),
  signal: z.string().optional().describe("The signal that ended the command, such as SIGTERM."),
  timedOut: z.boolean().describe("The command ran past its time limit and was killed."),
  truncated: z.boolean().describe("Part of the output was cut to fit the caps."),
  durationMs: z.number().nonnegative().describe("How long the command ran, in milliseconds."),
  fullOutput: keptOutputSchema.optional(),
  jobId: jobStatusShape.jobId
    .optional()
    .describe("With `background`: the job's id, for job_output, job_input and job_kill."),
  state: jobStatusShape.state.optional().describe("With `background`: the job's state."),
  next: jobReadShape.next.optional(),
  skippedBytes: jobReadShape.skippedBytes.optional(),
  more: jobReadShape.more.optional(),
});

/** What `bash` accepts. */
export type BashInput = z.input<typeof bashInputSchema>;
/** What `bash` returns. */
export type BashOutput = z.output<typeof bashOutputSchema>;

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /**
   * The time limit of a call that gives no `timeout`, in milliseconds.
   * @default 60_000
   */
  defaultTimeoutMs?: number;
  /**
   * The most characters of `output`, notes included.
   * @default 50_000
   */
  maxOutputChars?: number;
  /**
   * Bytes the client keeps of each of stdout and stderr (head and tail, with its own marker that
   * counts what it dropped), so a command that prints gigabytes costs bounded memory. Just under
   * `maxOutputChars`, so one noisy stream fills the budget and its marker's count survives the cap.
   * @default 49_000
   */
  maxOutputBytes?: number;
  /**
   * With `background`: how long to wait for a job's first output when the call gives no
   * `yieldMs`, in milliseconds.
   * @default 1_000
   */
  defaultYieldMs?: number;
}

/**
 * `bash`: run a shell command through the sandbox client and return what it printed.
 * A non-zero exit or a timeout is a result with `error: true` for the model, not an exception; a
 * client that refuses to run (`NO_SANDBOX`, say) throws its `ToolError`, which is passed on.
 */
export function createBashTool(
  client: SandboxClient,
  {
    defaultTimeoutMs = 60_000,
    maxOutputChars = MODEL_OUTPUT_LIMIT,
    maxOutputBytes = Math.max(2, maxOutputChars - 1_000),
    defaultYieldMs = 1_000,
  }: BashToolOptions = {},
): PluginToolDefinition<typeof bashInputSchema, typeof bashOutputSchema> {
  return defineTool({
    name: "bash",
    description: [
      "Run a shell command in the working directory and return its output.",
      "stdout and stderr come back merged (stdout first); a non-zero exit appends `[exit N]`.",
      `Output over ${maxOutputChars.toLocaleString("en-US")} characters keeps its head and tail; filter long output (grep, head, tail) rather than printing it all.`,
      `The default time limit is ${defaultTimeoutMs} ms (pass \`timeout\` in ms, up to ${BASH_MAX_TIMEOUT_MS}); stdin is empty.`,
      "With `background: true` the command runs as a job that outlives the call (servers, watchers, REPLs and prompts, long builds; `pty: true` gives it a terminal), read with job_output, answered with job_input, stopped with job_kill; the sandbox keeps jobs only where it offers a session.",
      "Prefer read_file and edit_file over cat, sed and echo for reading and changing files.",
    ].join(" "),
    inputSchema: bashInputSchema,
    outputSchema: bashOutputSchema,
    annotations: {
      title: "Run shell command",
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: true,
    },
    async execute({ command, timeout, cwd, background, yieldMs, pty }, { abortSignal }) {
      if (background === true) {
        if (timeout !== undefined) {
          throw new ToolError(
            "INVALID_INPUT",
            "bash got `timeout` with `background: true`: a background job has no time limit; it runs until it exits, job_kill stops it or the session ends. Drop `timeout`, or run in the foreground.",
          );
        }
        return runInBackground({
          client,
          command,
          cwd,
          pty: pty === true,
          yieldMs: yieldMs ?? defaultYieldMs,
          maxOutputBytes,
          abortSignal,
        });
      }
      for (const [name, value] of [
        ["yieldMs", yieldMs],
        ["pty", pty],
      ] as const) {
        if (value !== undefined) {
          throw new ToolError(
            "INVALID_INPUT",
            `bash got \`${name}\` without \`background: true\`: it applies to background jobs only. Add \`background: true\`, or drop \`${name}\`.`,
          );
        }
      }
      const timeoutMs = timeout ?? defaultTimeoutMs;
      const result = await client.exec(command, {
        ...(cwd === undefined ? {} : { cwd }),
        timeoutMs,
        abortSignal,
        maxOutputBytes,
        // Just under the most the model sees, stdout and stderr together.
        fullOutputOverBytes: Math.max(0, maxOutputChars - 2_000),
      });
      const notes: string[] = [];
      if (result.exitCode !== 0) {
        const how =
          result.exitCode ?? (result.signal === undefined ? "signal" : `signal ${result.signal}`);
        notes.push(`[exit ${how}]`);
      }
      if (result.timedOut) {
        notes.push(
          `[timed out after ${timeoutMs} ms and was killed; pass a larger \`timeout\` (at most ${BASH_MAX_TIMEOUT_MS} ms) or make the command finish sooner]`,
        );
      }
      const merged = mergeStreams(result.stdout, result.stderr);
      notes.push(...sandboxNoteLines(result));
      // Whether the text is cut is known only once the trailer's length is; the note is short.
      const fullNote = fullOutputNoteLines({ cut: true, fullOutput: result.fullOutput });
      const room = Math.max(0, maxOutputChars - [...notes, ...fullNote].join("\n").length - 1);
      const body = capText(merged, { maxChars: room });
      const truncated = result.truncated || body.cutChars > 0;
      notes.push(...fullOutputNoteLines({ cut: truncated, fullOutput: result.fullOutput }));
      const trailer = notes.join("\n");
      const separator = trailer === "" || body.text === "" || body.text.endsWith("\n") ? "" : "\n";
      const output: BashOutput = {
        output: `${body.text}${separator}${trailer}`,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        truncated,
        durationMs: result.durationMs,
      };
      if (result.signal !== undefined) output.signal = result.signal;
      if (result.fullOutput !== undefined) output.fullOutput = result.fullOutput;
      return output;
    },
    toModelOutput(output) {
      const { jobId, state, next, skippedBytes, more } = output;
      if (jobId !== undefined && state !== undefined && next !== undefined) {
        const read = { ...output, jobId, state, next, skippedBytes: skippedBytes ?? 0 };
        return {
          output: renderJobRead({ ...read, more: more ?? false }),
          error: jobFailed(read),
        };
      }
      return { output: output.output, error: output.exitCode !== 0 || output.timedOut };
    },
  });
}

/** stdout then stderr, merged, with a line break between when stdout lacks one. */
function mergeStreams(stdout: string, stderr: string): string {
  if (stdout === "" || stderr === "" || stdout.endsWith("\n")) return `${stdout}${stderr}`;
  return `${stdout}\n${stderr}`;
}
