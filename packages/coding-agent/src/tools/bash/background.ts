import type { SandboxClient } from "../../sandbox/index.js";
import { onJob, requireJobs } from "../jobs/calls.js";
import { jobReadOf } from "../jobs/state.js";
import type { BashOutput } from "./schema.js";

/** What {@link runInBackground} takes: `bash`'s input, resolved. */
interface BackgroundRequest {
  client: SandboxClient;
  command: string;
  cwd: string | undefined;
  pty: boolean;
  /** How long to wait for the first output. */
  yieldMs: number;
  /** The most bytes of output returned. */
  maxOutputBytes: number;
  abortSignal: AbortSignal | undefined;
}

/**
 * `bash` with `background: true`: start the command as a job of the client's session and return
 * once it has printed its first output or `yieldMs` has passed, whichever comes first, with what
 * it printed, its state and the cursor job_output reads on from. A call aborted while it waits
 * kills the job it started, since the model never learns its id.
 */
export async function runInBackground({
  client,
  command,
  cwd,
  pty,
  yieldMs,
  maxOutputBytes,
  abortSignal,
}: BackgroundRequest): Promise<BashOutput> {
  const jobs = requireJobs(client);
  const job = await jobs.start(command, { ...(cwd === undefined ? {} : { cwd }), pty });
  let read: Awaited<ReturnType<typeof jobs.output>>;
  try {
    read = await onJob(
      job.jobId,
      () =>
        jobs.output(job.jobId, {
          since: 0,
          waitMs: yieldMs,
          maxBytes: maxOutputBytes,
          ...(abortSignal === undefined ? {} : { abortSignal }),
        }),
      abortSignal,
    );
  } catch (error) {
    await jobs.kill(job.jobId).catch(() => {});
    throw error;
  }
  const { jobId, state, exitCode, signal, output, next, skippedBytes, more } = jobReadOf(read);
  const result: BashOutput = {
    output,
    exitCode,
    timedOut: false,
    truncated: more || skippedBytes > 0,
    // A remote client's clock may differ from ours.
    durationMs: Math.max(0, (read.job.endedAt ?? Date.now()) - read.job.startedAt),
    jobId,
    state,
    next,
    skippedBytes,
    more,
  };
  if (signal !== undefined) result.signal = signal;
  return result;
}
