import { defineTool, type PluginToolDefinition } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { requireJobs, untilAborted } from "./calls.js";
import { jobInfoOf, jobInfoSchema, jobStatusLine } from "./state.js";

/** The input of `job_list`: none. */
export const jobListInputSchema = z.object({}).strict();

/** The output of `job_list`. */
export const jobListOutputSchema = z.object({
  jobs: z.array(jobInfoSchema).describe("The session's jobs, oldest first, ended ones included."),
});

/** What `job_list` accepts. */
export type JobListInput = z.input<typeof jobListInputSchema>;
/** What `job_list` returns. */
export type JobListOutput = z.output<typeof jobListOutputSchema>;

/** `job_list`: the session's background jobs with their state. */
export function createJobListTool(
  client: SandboxClient,
): PluginToolDefinition<typeof jobListInputSchema, typeof jobListOutputSchema> {
  return defineTool({
    name: "job_list",
    description:
      "List this session's background jobs (started by bash with `background: true`), oldest first, ended ones included: id, state, exit status, bytes printed and command.",
    inputSchema: jobListInputSchema,
    outputSchema: jobListOutputSchema,
    annotations: { title: "List background jobs", readOnlyHint: true },
    async execute(_input, { abortSignal }) {
      const jobs = requireJobs(client);
      return { jobs: (await untilAborted(jobs.list(), abortSignal)).map(jobInfoOf) };
    },
    toModelOutput({ jobs }) {
      if (jobs.length === 0) {
        return {
          output: "[no jobs in this session; bash with `background: true` starts one]",
          error: false,
        };
      }
      const lines = jobs.map(
        (job) =>
          `${jobStatusLine(job)} ${job.outputBytes.toLocaleString("en-US")} bytes printed${job.pty ? ", in a pty" : ""}: ${job.command}`,
      );
      return { output: lines.join("\n"), error: false };
    },
  });
}
