import { ToolError } from "@pleach/core";
import type {
  JobInfo,
  JobOutput,
  JobOutputOptions,
  JobStartOptions,
  SandboxJobs,
} from "@pleach/core/sandbox";
import { checkJobInput } from "@pleach/core/sandbox";
import type { z } from "zod";
import {
  DEFAULT_MAX_JOB_WAIT_MS,
  jobInfoSchema,
  jobListSchema,
  jobOutputSchema,
} from "./server/job-protocol.js";

/** What every jobs call of {@link HttpSandboxJobs} takes beside its own options. */
export interface HttpJobCallOptions {
  /** Aborting stops waiting for the server (`ABORTED`); the call may have taken effect there. */
  abortSignal?: AbortSignal;
}

/** The jobs of a sandbox on a sandbox server, each call also taking an abort signal. */
export interface HttpSandboxJobs extends SandboxJobs {
  start(command: string, options?: JobStartOptions & HttpJobCallOptions): Promise<JobInfo>;
  /** Aborting ends the wait: what there is by then is returned (asked for once more). */
  output(jobId: string, options?: JobOutputOptions): Promise<JobOutput>;
  input(jobId: string, text: string, options?: HttpJobCallOptions): Promise<void>;
  kill(jobId: string, options?: HttpJobCallOptions): Promise<JobInfo>;
  list(options?: HttpJobCallOptions): Promise<JobInfo[]>;
}

/** One request of the client: the body of its 2xx answer, or the `ToolError` of another. */
export type HttpJobRequest = (
  route: string,
  options: { method: string; body?: unknown; abortSignal?: AbortSignal; timeoutMs: number },
) => Promise<Buffer>;

/** Options of {@link createHttpJobs}. */
export interface HttpJobsOptions {
  /** Sends a request under `/v1` (see `createHttpStreamSandboxProvider`). */
  request: HttpJobRequest;
  /** The sandbox's routes, `/sandboxes/:id`. */
  prefix: string;
  /** How long a call may take, beyond the wait it asks for. */
  requestTimeoutMs: number;
  /** How the server is named in errors. */
  where: string;
}

/**
 * The jobs of one sandbox over the jobs routes of PROTOCOL.md. A wait longer than one request is
 * held by the server (at most {@link DEFAULT_MAX_JOB_WAIT_MS} asked, less if the server cuts it) is
 * split into several requests, each asked again from the same cursor until the wait is met or
 * its time is up; an unreachable server, a timeout or an abort fails as the client's other calls.
 */
export function createHttpJobs({
  request,
  prefix,
  requestTimeoutMs,
  where,
}: HttpJobsOptions): HttpSandboxJobs {
  const jobRoute = (jobId: string, action: string) => {
    if (typeof jobId !== "string") {
      throw new ToolError("INVALID_INPUT", `a job id must be a string, got ${typeof jobId}`);
    }
    return `${prefix}/jobs/${encodeURIComponent(jobId)}/${action}`;
  };
  const answer = async <Schema extends z.ZodType>(
    schema: Schema,
    what: string,
    bytes: Promise<Buffer>,
  ): Promise<z.infer<Schema>> => {
    const text = (await bytes).toString("utf8");
    let parsed: z.ZodSafeParseResult<z.infer<Schema>> | undefined;
    try {
      parsed = schema.safeParse(JSON.parse(text));
    } catch {
      // Not JSON: said below.
    }
    if (parsed?.success !== true) {
      throw new ToolError(
        "INTERNAL",
        `the sandbox server at ${where} answered with something that is not ${what}: ${text.slice(0, 200)}`,
      );
    }
    return parsed.data;
  };

  return {
    async start(command, { abortSignal, ...options } = {}) {
      const sent = request(`${prefix}/jobs`, {
        method: "POST",
        body: { command, ...options },
        abortSignal,
        timeoutMs: requestTimeoutMs,
      });
      return answer(jobInfoSchema, "a job", sent);
    },

    async output(jobId, { abortSignal, waitMs, ...options } = {}) {
      const route = jobRoute(jobId, "output");
      const aborted = () => abortSignal?.aborted === true;
      // A wait that is no whole number is sent once, as given, for the server to refuse.
      const splits = Number.isSafeInteger(waitMs) && (waitMs ?? 0) > 0;
      const deadline = performance.now() + (splits ? (waitMs ?? 0) : 0);
      const nextWait = () =>
        splits
          ? Math.max(0, Math.min(DEFAULT_MAX_JOB_WAIT_MS, Math.ceil(deadline - performance.now())))
          : waitMs;
      for (;;) {
        // Once aborted, the wait is over: what there is is asked for, without waiting.
        const waiting = !aborted();
        const wait = waiting ? nextWait() : 0;
        const query = new URLSearchParams();
        for (const [name, value] of Object.entries({ ...options, waitMs: wait })) {
          if (value !== undefined) query.set(name, String(value));
        }
        const sent = request(`${route}?${query}`, {
          method: "GET",
          abortSignal: waiting ? abortSignal : undefined,
          timeoutMs: requestTimeoutMs + (typeof wait === "number" && wait > 0 ? wait : 0),
        });
        let read: JobOutput;
        try {
          read = await answer(jobOutputSchema, "a job's output", sent);
        } catch (error) {
          if (waiting && aborted()) continue;
          throw error;
        }
        const done = !splits || !waiting || deadline - performance.now() <= 0;
        if (done || !stillWaiting(read, options.until)) return read;
      }
    },

    async input(jobId, text, { abortSignal } = {}) {
      // Refused here too, rather than sent for the server to refuse once it has read it all.
      if (typeof text === "string") checkJobInput(text);
      await request(jobRoute(jobId, "input"), {
        method: "POST",
        body: { text },
        abortSignal,
        timeoutMs: requestTimeoutMs,
      });
    },

    async kill(jobId, { abortSignal } = {}) {
      const sent = request(jobRoute(jobId, "kill"), {
        method: "POST",
        abortSignal,
        timeoutMs: requestTimeoutMs,
      });
      return answer(jobInfoSchema, "a job", sent);
    },

    async list({ abortSignal } = {}) {
      const sent = request(`${prefix}/jobs`, {
        method: "GET",
        abortSignal,
        timeoutMs: requestTimeoutMs,
      });
      return (await answer(jobListSchema, "a list of jobs", sent)).jobs;
    },
  };
}

/**
 * Whether an output read that came back still leaves the caller waiting, so that the same read is
 * asked again: the job runs, every byte it has printed was read (a read cut by `maxBytes` is
 * answered at once), and nothing new came, or `until` did not match.
 */
function stillWaiting(read: JobOutput, until: string | undefined): boolean {
  if (read.job.state !== "running" || read.next < read.job.outputBytes) return false;
  return until === undefined ? read.next === read.since : read.matched !== true;
}
