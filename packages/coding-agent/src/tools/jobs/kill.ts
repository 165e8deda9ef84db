import { defineTool, type PluginToolDefinition } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { onJob, requireJobs } from "./calls.js";
import { jobIdSchema, jobInfoOf, jobInfoSchema, jobStatusLine } from "./state.js";

/** The input of `job_kill`. */
export const jobKillInputSchema = z.object({ jobId: jobIdSchema }).strict();

/** The output of `job_kill`: the job as it is after the kill. */
export const jobKillOutputSchema = jobInfoSchema;

/** What `job_kill` accepts. */
export type JobKillInput = z.input<typeof jobKillInputSchema>;
/** What `job_kill` returns. */
export type JobKillOutput = z.output<typeof jobKillOutputSchema>;

/** `job_kill`: stop a background job and everything it started. */
export function createJobKillTool(
  client: SandboxClient,
): PluginToolDefinition<typeof jobKillInputSchema, typeof jobKillOutputSchema> {
  return defineTool({
    name: "job_kill",
    description:
      "Stop a background job (started by bash with `background: true`) and every process it started: SIGTERM, then SIGKILL. Harmless on a job that has ended. Its output stays readable with job_output.",
    inputSchema: jobKillInputSchema,
    outputSchema: jobKillOutputSchema,
    annotations: {
      title: "Stop a background job",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    },
    async execute({ jobId }, { abortSignal }) {
      const jobs = requireJobs(client);
      return jobInfoOf(await onJob(jobId, () => jobs.kill(jobId), abortSignal));
    },
    toModelOutput(job) {
      return { output: jobStatusLine(job), error: false };
    },
  });
}
