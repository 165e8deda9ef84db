import { ToolError } from "../errors.js";
import { formatBytes } from "../format-bytes.js";
import type { SandboxClient } from "./contract.js";

/**
 * Background jobs: an optional capability a {@link SandboxClient} may offer beside its three
 * methods, as `client.jobs`. A job is a command that outlives the call that started it and lives
 * in the client's session sandbox until it exits, is killed, or the session ends (`release`, an
 * abort, the death of the host process). Its stdout and stderr are one stream, kept per job up to
 * a bound and read by a byte cursor, so that nothing is read twice or skipped unnoticed.
 */

/** Options of {@link SandboxJobs.start}. */
export interface JobStartOptions {
  /** Folder to run in, relative to the workspace root (absolute paths inside it are accepted). */
  cwd?: string;
  /** Extra environment variables for the job. */
  env?: Record<string, string>;
  /**
   * Run the job in a pseudo-terminal (for programs that want one: a REPL's prompt, colours,
   * line-buffered output). Its output is then the terminal's: stdout and stderr together, input
   * echoed, `\r\n` line ends.
   * @default false
   */
  pty?: boolean;
}

/** Where a job is in its life. */
export type JobState = "running" | "exited" | "killed";

/** What a client says of one job. */
export interface JobInfo {
  /** The job's id, unique in its session. */
  jobId: string;
  /** The command it runs. */
  command: string;
  state: JobState;
  /** Once ended: its exit code, or `null` when a signal ended it. */
  exitCode: number | null;
  /** Once ended by a signal: which, such as `"SIGKILL"`. */
  signal?: string;
  /** When it started, in milliseconds since the epoch. */
  startedAt: number;
  /** When it ended, in milliseconds since the epoch. */
  endedAt?: number;
  /** Bytes of output it has printed so far, kept or not (the cursor of its end). */
  outputBytes: number;
  /** Bytes of its oldest output dropped to stay within the bound kept per job. */
  droppedBytes: number;
  /** Whether it runs in a pseudo-terminal. */
  pty: boolean;
}

/** Options of {@link SandboxJobs.output}. */
export interface JobOutputOptions {
  /** The cursor to read from: a byte offset in the job's output (`next` of the last read). @default 0 */
  since?: number;
  /**
   * How long to wait, in milliseconds, for output after `since` (or, with `until`, for it to
   * match) when there is none yet and the job still runs. @default 0
   */
  waitMs?: number;
  /** A regular expression (JavaScript syntax) to wait for in the output after `since`. */
  until?: string;
  /** The most bytes of output to return; the rest waits for the next read. @default 40_000 */
  maxBytes?: number;
  /** Ends the wait early: what is there by then is returned. */
  abortSignal?: AbortSignal;
}

/** What {@link SandboxJobs.output} returns. */
export interface JobOutput {
  /** The output from `since` to `next`, decoded as UTF-8 (never a character cut in two). */
  output: string;
  /** The cursor this read started from: `since`, or where the kept output begins if that was later. */
  since: number;
  /** The cursor to pass as `since` next time. */
  next: number;
  /** Bytes between the asked `since` and the kept output, dropped for the bound kept per job. */
  skippedBytes: number;
  /** Whether `until` matched the output returned (absent without `until`). */
  matched?: boolean;
  /** The job as it is after the read, with its exit status once it has ended. */
  job: JobInfo;
}

/** The jobs of a session: start, read, answer, kill, list. */
export interface SandboxJobs {
  /** Start `command` in the background; throws `TOO_MANY_JOBS` past the session's limit. */
  start(command: string, options?: JobStartOptions): Promise<JobInfo>;
  /** Read the output after a cursor, waiting for it if asked; `NOT_FOUND` for an unknown job. */
  output(jobId: string, options?: JobOutputOptions): Promise<JobOutput>;
  /**
   * Write `text` to the job's stdin; `CONFLICT` once the job has ended, `TOO_LARGE` for more than
   * {@link MAX_JOB_INPUT_BYTES} in one call or past {@link MAX_JOB_QUEUED_INPUT_BYTES} the job has
   * not read yet.
   */
  input(jobId: string, text: string): Promise<void>;
  /** Kill the job and everything it started (TERM, then KILL); harmless on an ended job. */
  kill(jobId: string): Promise<JobInfo>;
  /** The session's jobs, oldest first, ended ones included. */
  list(): Promise<JobInfo[]>;
}

/** The most bytes one {@link SandboxJobs.input} call writes (1 MiB). */
export const MAX_JOB_INPUT_BYTES = 1024 * 1024;

/**
 * The most bytes of input a job may have waiting that it has not read yet (4 MiB): input to a job
 * that does not read its stdin would otherwise pile up in the session without bound.
 */
export const MAX_JOB_QUEUED_INPUT_BYTES = 4 * 1024 * 1024;

/**
 * Refuse job input over {@link MAX_JOB_INPUT_BYTES} with `TOO_LARGE`, and when `queuedBytes` (what
 * the job has not read yet) is given, input that would take that past
 * {@link MAX_JOB_QUEUED_INPUT_BYTES}. Returns the input's size in bytes.
 */
export function checkJobInput(text: string, queuedBytes?: number): number {
  const bytes = utf8Length(text);
  if (bytes > MAX_JOB_INPUT_BYTES) {
    throw new ToolError(
      "TOO_LARGE",
      `the input is ${formatBytes(bytes)}, over the ${formatBytes(MAX_JOB_INPUT_BYTES)} one call writes to a job; send it in parts, or write it to a file and have the job read that file`,
      { details: { bytes, maxBytes: MAX_JOB_INPUT_BYTES } },
    );
  }
  if (queuedBytes !== undefined && queuedBytes + bytes > MAX_JOB_QUEUED_INPUT_BYTES) {
    throw new ToolError(
      "TOO_LARGE",
      `the job has not read ${formatBytes(queuedBytes)} of the input it was given yet, and ${formatBytes(bytes)} more would pass the ${formatBytes(MAX_JOB_QUEUED_INPUT_BYTES)} a job may have waiting; wait until it reads its input (job_output shows what it does), or write the input to a file and have the job read that file`,
      { details: { bytes, queuedBytes, maxBytes: MAX_JOB_QUEUED_INPUT_BYTES } },
    );
  }
  return bytes;
}

/** The UTF-8 size of `text`, counted without encoding it (core runs outside Node too). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit < 0xdc00 && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: one code point of four bytes.
      bytes += 4;
      index += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** A client that offers jobs. */
export interface JobSandboxClient extends SandboxClient {
  readonly jobs: SandboxJobs;
}

/** The jobs `client` offers, or `undefined` when it offers none. */
export function sandboxJobsOf(client: SandboxClient): SandboxJobs | undefined {
  const jobs = (client as Partial<JobSandboxClient>).jobs;
  return typeof jobs === "object" && jobs !== null ? jobs : undefined;
}

/**
 * `jobs` with each call passed through `around` (a wrapper's retry or failure watch), so that a
 * client wrapping another (a pool's, a composite's) offers its jobs as it offers its three methods.
 */
export function wrapJobs(
  jobs: SandboxJobs,
  around: <Result>(call: () => Promise<Result>) => Promise<Result>,
): SandboxJobs {
  return {
    start: (command, options) => around(() => jobs.start(command, options)),
    output: (jobId, options) => around(() => jobs.output(jobId, options)),
    input: (jobId, text) => around(() => jobs.input(jobId, text)),
    kill: (jobId) => around(() => jobs.kill(jobId)),
    list: () => around(() => jobs.list()),
  };
}

/** The error a job tool throws over a client without jobs: what to use instead. */
export function jobsUnsupportedError(): ToolError {
  return new ToolError(
    "UNSUPPORTED",
    "this sandbox runs no background jobs: its client offers no session sandbox to keep them in. " +
      "Run the command in the foreground (with a `timeout` up to 600000 ms), or use a client with " +
      "a session: the local sandbox created with `session: true` (as `pleach mcp`, the providers and " +
      "the runtime do), a sandbox server, or Docker.",
  );
}
