import { z } from "zod";
import { jobReadShape, jobStatusShape } from "../jobs/state.js";
import { keptOutputSchema } from "../shared/sandbox-hints.js";

/** The longest `timeout` a call may ask for, in milliseconds (ten minutes). */
export const BASH_MAX_TIMEOUT_MS = 600_000;

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
