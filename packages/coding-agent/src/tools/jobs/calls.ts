import { isToolError, ToolError } from "@pleach/core";
import {
  jobsUnsupportedError,
  type SandboxClient,
  type SandboxJobs,
  sandboxJobsOf,
} from "../../sandbox/index.js";

/** The longest a job tool waits for output, in milliseconds (ten minutes, as `bash`'s `timeout`). */
export const JOB_MAX_WAIT_MS = 600_000;

/** Whether `client` offers jobs: the job tools are offered to a model only then. */
export function offersJobs(client: SandboxClient): boolean {
  return sandboxJobsOf(client) !== undefined;
}

/** The jobs `client` offers, or the error that says what to use instead. */
export function requireJobs(client: SandboxClient): SandboxJobs {
  const jobs = sandboxJobsOf(client);
  if (jobs === undefined) throw jobsUnsupportedError();
  return jobs;
}

/**
 * Run one call on job `jobId`: an unknown id becomes an error that says how to find the right
 * one, and an abort of the tool call is `ABORTED` at once (a client given the signal also stops
 * waiting, but answers with what it has).
 */
export async function onJob<Result>(
  jobId: string,
  call: () => Promise<Result>,
  abortSignal?: AbortSignal,
): Promise<Result> {
  try {
    return await untilAborted(call(), abortSignal);
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_FOUND") {
      throw new ToolError(
        "NOT_FOUND",
        `there is no job ${JSON.stringify(jobId)} in this session; job_list lists its jobs with their ids`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** `promise`, or an `ABORTED` error as soon as `abortSignal` aborts. */
export function untilAborted<Result>(
  promise: Promise<Result>,
  abortSignal: AbortSignal | undefined,
): Promise<Result> {
  if (abortSignal === undefined) return promise;
  const aborted = () => new ToolError("ABORTED", "the call was aborted while it waited on a job");
  if (abortSignal.aborted) return Promise.reject(aborted());
  return new Promise<Result>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    abortSignal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => abortSignal.removeEventListener("abort", onAbort));
  });
}
