import { defineTool, MODEL_OUTPUT_LIMIT, type PluginToolDefinition } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { JOB_MAX_WAIT_MS, onJob, requireJobs } from "./calls.js";
import {
  jobFailed,
  jobIdSchema,
  jobReadOf,
  jobReadShape,
  jobStatusShape,
  renderJobRead,
} from "./state.js";

/** The input of `job_output`. */
export const jobOutputInputSchema = z
  .object({
    jobId: jobIdSchema,
    since: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "The cursor to read from: `next` of the last read (default 0, the start of the output).",
      ),
    waitMs: z
      .number()
      .int()
      .min(0)
      .max(JOB_MAX_WAIT_MS)
      .optional()
      .describe(
        `How long to wait, in milliseconds, while the job runs and there is no output after \`since\` yet (or, with \`until\`, until it matches). Default 0: answer at once. At most ${JOB_MAX_WAIT_MS}.`,
      ),
    until: z
      .string()
      .min(1)
      .superRefine((pattern, context) => {
        try {
          new RegExp(pattern);
        } catch (error) {
          context.addIssue({
            code: "custom",
            message: `not a valid JavaScript regular expression: ${(error as Error).message}`,
          });
        }
      })
      .optional()
      .describe(
        "A regular expression (JavaScript syntax) to wait for in the output after `since`, such as `listening on|error`; give `waitMs` to wait for it.",
      ),
  })
  .strict();

/** The output of `job_output`. */
export const jobOutputOutputSchema = z.object({
  ...jobStatusShape,
  output: z
    .string()
    .describe("What the job printed (stdout and stderr together) between `since` and `next`."),
  since: z
    .number()
    .int()
    .nonnegative()
    .describe("Where this read started: `since`, or where the kept output begins if later."),
  ...jobReadShape,
  matched: z.boolean().optional().describe("With `until`: whether it matched the output returned."),
});

/** What `job_output` accepts. */
export type JobOutputInput = z.input<typeof jobOutputInputSchema>;
/** What `job_output` returns. */
export type JobOutputOutput = z.output<typeof jobOutputOutputSchema>;

/** Options of {@link createJobOutputTool}. */
export interface JobOutputToolOptions {
  /**
   * The most bytes of output one call returns, so the text with its notes stays under the 50,000
   * characters a model sees (a byte never decodes to more than one character).
   * @default 49_000
   */
  maxOutputBytes?: number;
}

/** `job_output`: read a background job's output after a cursor, waiting for it if asked. */
export function createJobOutputTool(
  client: SandboxClient,
  { maxOutputBytes = MODEL_OUTPUT_LIMIT - 1_000 }: JobOutputToolOptions = {},
): PluginToolDefinition<typeof jobOutputInputSchema, typeof jobOutputOutputSchema> {
  return defineTool({
    name: "job_output",
    description: [
      "Read the output of a background job (started by bash with `background: true`) after the cursor `since`, with the cursor to pass next time (`next`), so nothing is read twice.",
      "Waits up to `waitMs` for output, or for the regular expression `until` to appear (a server's `listening` line, a watcher's rebuild).",
      `Returns at most ${maxOutputBytes.toLocaleString("en-US")} bytes a call (\`more\` says when more is waiting), and the exit status once the job has ended.`,
      "A job keeps only its latest output; `skippedBytes` says how much was dropped unread.",
    ].join(" "),
    inputSchema: jobOutputInputSchema,
    outputSchema: jobOutputOutputSchema,
    annotations: { title: "Read a background job's output", readOnlyHint: true },
    async execute({ jobId, since = 0, waitMs = 0, until }, { abortSignal }) {
      const jobs = requireJobs(client);
      const read = await onJob(
        jobId,
        () =>
          jobs.output(jobId, {
            since,
            waitMs,
            maxBytes: maxOutputBytes,
            ...(until === undefined ? {} : { until }),
            ...(abortSignal === undefined ? {} : { abortSignal }),
          }),
        abortSignal,
      );
      return { ...jobReadOf(read), since: read.since };
    },
    toModelOutput(output) {
      return { output: renderJobRead(output), error: jobFailed(output) };
    },
  });
}
