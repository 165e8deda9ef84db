import { z } from "zod";
import type { JobInfo, JobOutput } from "../../sandbox/index.js";

/**
 * What the job tools (and `bash` with `background: true`) say of a job and of a read of its
 * output, as data and as the lines a model reads, one way for all of them.
 */

/** A job's id as the tools take it. */
export const jobIdSchema = z
  .string()
  .min(1)
  .describe("The job's id, as `bash` with `background: true` or job_list gave it.");

const cursor = z.number().int().nonnegative();

/** A job's state and, once it ended, its exit status. */
export const jobStatusShape = {
  jobId: z.string().describe("The job's id."),
  state: z
    .enum(["running", "exited", "killed"])
    .describe("running; exited (by itself); killed (by job_kill or the session's end)."),
  exitCode: z
    .number()
    .int()
    .nullable()
    .describe("Once exited: its exit code; null while it runs, or when a signal ended it."),
  signal: z.string().optional().describe("The signal that ended it, such as SIGTERM."),
};

/** One job as job_list and job_kill show it. */
export const jobInfoSchema = z.object({
  ...jobStatusShape,
  command: z.string().describe("The command it runs."),
  startedAt: z.number().describe("When it started, in milliseconds since the epoch."),
  endedAt: z.number().optional().describe("When it ended, in milliseconds since the epoch."),
  outputBytes: cursor.describe("Bytes it has printed so far: the cursor of its output's end."),
  droppedBytes: cursor.describe("Bytes of its oldest output dropped to stay within the bound."),
  pty: z.boolean().describe("Whether it runs in a pseudo-terminal."),
});

/** A job as the tools return it. */
export type JobInfoOutput = z.output<typeof jobInfoSchema>;

/** A read of a job's output, the fields job_output returns and bash's background result shares. */
export const jobReadShape = {
  next: cursor.describe("The cursor to pass as `since` to job_output for the output after this."),
  skippedBytes: cursor.describe(
    "Bytes after `since` that were dropped (the job keeps only its latest output) before they were read.",
  ),
  more: z
    .boolean()
    .describe("More output is already waiting after `next`: call job_output with `since: next`."),
};

/** The fields of {@link jobReadShape} and {@link jobStatusShape}, with the text read. */
export interface JobRead {
  jobId: string;
  state: JobInfo["state"];
  exitCode: number | null;
  signal?: string | undefined;
  output: string;
  next: number;
  skippedBytes: number;
  more: boolean;
  matched?: boolean | undefined;
}

/** The tool fields of a client's {@link JobOutput}. */
export function jobReadOf(read: JobOutput): JobRead {
  const result: JobRead = {
    ...jobStatusOf(read.job),
    output: read.output,
    next: read.next,
    skippedBytes: read.skippedBytes,
    more: read.job.outputBytes > read.next,
  };
  if (read.matched !== undefined) result.matched = read.matched;
  return result;
}

/** The status fields of a client's {@link JobInfo}. */
function jobStatusOf(job: JobInfo): Pick<JobRead, "jobId" | "state" | "exitCode" | "signal"> {
  const status: Pick<JobRead, "jobId" | "state" | "exitCode" | "signal"> = {
    jobId: job.jobId,
    state: job.state,
    exitCode: job.exitCode,
  };
  if (job.signal !== undefined) status.signal = job.signal;
  return status;
}

/** A client's {@link JobInfo} with exactly the fields of {@link jobInfoSchema}. */
export function jobInfoOf(job: JobInfo): JobInfoOutput {
  const info: JobInfoOutput = {
    ...jobStatusOf(job),
    command: job.command,
    startedAt: job.startedAt,
    outputBytes: job.outputBytes,
    droppedBytes: job.droppedBytes,
    pty: job.pty,
  };
  if (job.endedAt !== undefined) info.endedAt = job.endedAt;
  return info;
}

/** `[job 3 running]`, `[job 3 exited 0 · next 1234]`, `[job 3 killed by SIGTERM]`. */
export function jobStatusLine(
  job: Pick<JobRead, "jobId" | "state" | "exitCode" | "signal">,
  next?: number,
): string {
  const how =
    job.state === "running"
      ? "running"
      : job.state === "killed"
        ? `killed${job.signal === undefined ? "" : ` by ${job.signal}`}`
        : job.exitCode === null
          ? `ended by ${job.signal ?? "a signal"}`
          : `exited ${job.exitCode}`;
  return `[job ${job.jobId} ${how}${next === undefined ? "" : ` · next ${next}`}]`;
}

/** Whether a job's end is a failure a model should see flagged: it exited non-zero or crashed. */
export function jobFailed(job: Pick<JobRead, "state" | "exitCode">): boolean {
  return job.state === "exited" && job.exitCode !== 0;
}

/**
 * A read as a model reads it: the text, then what was skipped, what `until` did, whether more
 * waits, and the job's status with the next cursor.
 */
export function renderJobRead(read: JobRead): string {
  const notes: string[] = [];
  if (read.skippedBytes > 0) {
    notes.push(
      `[${read.skippedBytes.toLocaleString("en-US")} bytes of output were dropped before they were read: the job keeps only its latest output]`,
    );
  }
  if (read.matched === true) notes.push("[`until` matched]");
  if (read.matched === false) {
    notes.push(
      read.state === "running"
        ? "[`until` did not match yet: call job_output again from `next` with a `waitMs` to keep waiting]"
        : "[`until` did not match, and the job has ended]",
    );
  }
  if (read.more) {
    notes.push(
      `[more output is waiting: call job_output with jobId "${read.jobId}" and since ${read.next}]`,
    );
  } else if (read.state === "running") {
    notes.push(
      `[read what it prints next with job_output (jobId "${read.jobId}", since ${read.next}, waitMs to wait); job_input answers it, job_kill stops it]`,
    );
  }
  notes.push(jobStatusLine(read, read.next));
  const separator = read.output === "" || read.output.endsWith("\n") ? "" : "\n";
  return `${read.output}${separator}${notes.join("\n")}`;
}
