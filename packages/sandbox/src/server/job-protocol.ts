import { z } from "zod";

/**
 * The jobs routes of the protocol (`/v1/sandboxes/:id/jobs`, see PROTOCOL.md): the bodies the
 * server takes, and the answers as a client reads them, each checked with its schema.
 */

/**
 * The longest a job output request is held waiting, in milliseconds, unless the server is told
 * otherwise (`maxJobWaitMs`); a longer `waitMs` is cut to it, and the client asks again.
 */
export const DEFAULT_MAX_JOB_WAIT_MS = 20_000;

/** Body of `POST /v1/sandboxes/:id/jobs`: the arguments of `SandboxJobs.start`. */
export const jobStartRequestSchema = z.strictObject({
  command: z.string(),
  cwd: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  pty: z.boolean().optional(),
});

/** Body of `POST /v1/sandboxes/:id/jobs/:jobId/input`. */
export const jobInputRequestSchema = z.strictObject({ text: z.string() });

/** Body of `POST /v1/sandboxes/:id/jobs/:jobId/kill`: none (or `{}`). */
export const jobKillRequestSchema = z.strictObject({});

/** A `JobInfo` as a client reads it. */
export const jobInfoSchema = z.object({
  jobId: z.string(),
  command: z.string(),
  state: z.enum(["running", "exited", "killed"]),
  exitCode: z.number().nullable(),
  signal: z.string().optional(),
  startedAt: z.number(),
  endedAt: z.number().optional(),
  outputBytes: z.number(),
  droppedBytes: z.number(),
  pty: z.boolean(),
});

/** The answer of `GET /v1/sandboxes/:id/jobs`. */
export const jobListSchema = z.object({ jobs: z.array(jobInfoSchema) });

/** A `JobOutput` as a client reads it. */
export const jobOutputSchema = z.object({
  output: z.string(),
  since: z.number(),
  next: z.number(),
  skippedBytes: z.number(),
  matched: z.boolean().optional(),
  job: jobInfoSchema,
});
