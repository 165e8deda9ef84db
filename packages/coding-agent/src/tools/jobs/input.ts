import { Buffer } from "node:buffer";
import { defineTool, type PluginToolDefinition } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { onJob, requireJobs } from "./calls.js";
import { jobIdSchema } from "./state.js";

/** The most characters one `job_input` call writes. */
const JOB_INPUT_MAX_CHARS = 100_000;

/** The input of `job_input`. */
export const jobInputInputSchema = z
  .object({
    jobId: jobIdSchema,
    text: z
      .string()
      .min(1)
      .max(JOB_INPUT_MAX_CHARS)
      .describe(
        'What to write to the job\'s stdin, exactly as given: end a line with "\\n" (a prompt waits for it); "\\u0004" is end-of-file and "\\u0003" an interrupt only in a job started with `pty: true`.',
      ),
  })
  .strict();

/** The output of `job_input`. */
export const jobInputOutputSchema = z.object({
  jobId: z.string().describe("The job written to."),
  bytes: z.number().int().nonnegative().describe("Bytes written to its stdin (UTF-8)."),
});

/** What `job_input` accepts. */
export type JobInputInput = z.input<typeof jobInputInputSchema>;
/** What `job_input` returns. */
export type JobInputOutput = z.output<typeof jobInputOutputSchema>;

/** `job_input`: write text to a background job's stdin (answer a prompt, feed a REPL). */
export function createJobInputTool(
  client: SandboxClient,
): PluginToolDefinition<typeof jobInputInputSchema, typeof jobInputOutputSchema> {
  return defineTool({
    name: "job_input",
    description:
      'Write text to the stdin of a background job (started by bash with `background: true`): answer a prompt, feed a REPL. The text is written as is: end a line with "\\n". Read the answer with job_output from your last `next`.',
    inputSchema: jobInputInputSchema,
    outputSchema: jobInputOutputSchema,
    annotations: {
      title: "Write to a background job",
      readOnlyHint: false,
      destructiveHint: false,
    },
    async execute({ jobId, text }, { abortSignal }) {
      const jobs = requireJobs(client);
      await onJob(jobId, () => jobs.input(jobId, text), abortSignal);
      return { jobId, bytes: Buffer.byteLength(text, "utf8") };
    },
    toModelOutput({ jobId, bytes }) {
      return {
        output: `[wrote ${bytes.toLocaleString("en-US")} bytes to job ${jobId}'s stdin; read its answer with job_output from your last \`next\`]`,
        error: false,
      };
    },
  });
}
