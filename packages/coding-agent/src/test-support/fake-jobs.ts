import { Buffer } from "node:buffer";
import { ToolError } from "@pleach/core";
import type {
  ExecResult,
  JobInfo,
  JobOutput,
  JobOutputOptions,
  JobSandboxClient,
  JobStartOptions,
  SandboxJobs,
} from "../sandbox/index.js";

/** Options of {@link createFakeJobs}. */
export interface FakeJobsOptions {
  /** @default 8 */
  maxJobs?: number;
  /** Bytes of output kept per job, oldest dropped. @default 1_048_576 */
  keepBytes?: number;
  /**
   * What a job does when it starts (print at once, exit at once), before `start` resolves.
   * @default nothing: it runs silently until the test prints or ends it
   */
  onStart?(job: FakeJobControl): void;
}

/** A test's hands on one fake job. */
export interface FakeJobControl {
  readonly jobId: string;
  readonly command: string;
  /** Append `text` to its output, waking readers. */
  print(text: string): void;
  /** End it with `exitCode` (or a signal), waking readers. */
  exit(exitCode: number | null, signal?: string): void;
  /** What was written to its stdin, in order. */
  readonly inputs: string[];
}

/**
 * An in-memory {@link SandboxJobs} for the job tools' tests: jobs print only what the test makes
 * them print, so every read is deterministic. It follows the contract's cursor rules (byte
 * offsets, oldest output dropped past `keepBytes`, `skippedBytes`, never half a character).
 */
export function createFakeJobs({
  maxJobs = 8,
  keepBytes = 1024 * 1024,
  onStart = () => {},
}: FakeJobsOptions = {}) {
  interface FakeJob {
    info: JobInfo;
    /** The kept output, which starts at cursor `info.droppedBytes`. */
    kept: Buffer;
    control: FakeJobControl;
    wake: Set<() => void>;
  }
  const jobs = new Map<string, FakeJob>();
  let counter = 0;

  const find = (jobId: string): FakeJob => {
    const job = jobs.get(jobId);
    if (job === undefined) throw new ToolError("NOT_FOUND", `no job ${jobId}`);
    return job;
  };
  const notify = (job: FakeJob) => {
    for (const wake of job.wake) wake();
  };
  const end = (job: FakeJob, exitCode: number | null, signal?: string) => {
    if (job.info.state !== "running") return;
    job.info.state = signal === "SIGKILL" || signal === "SIGTERM" ? "killed" : "exited";
    job.info.exitCode = exitCode;
    if (signal !== undefined) job.info.signal = signal;
    job.info.endedAt = Date.now();
    notify(job);
  };

  const read = (job: FakeJob, since: number, maxBytes: number, until?: RegExp) => {
    const start = Math.max(since, job.info.droppedBytes);
    const available = job.kept.subarray(start - job.info.droppedBytes);
    let length = Math.min(available.length, maxBytes);
    // Never cut a character in two: back off over continuation bytes.
    while (length < available.length && length > 0 && ((available[length] ?? 0) & 0xc0) === 0x80) {
      length--;
    }
    const output = available.subarray(0, length).toString("utf8");
    const result: JobOutput = {
      output,
      since: start,
      next: start + length,
      skippedBytes: start - since,
      job: { ...job.info },
    };
    if (until !== undefined) result.matched = until.test(output);
    return result;
  };

  const sandboxJobs: SandboxJobs = {
    async start(command: string, options: JobStartOptions = {}) {
      const running = [...jobs.values()].filter((job) => job.info.state === "running").length;
      if (running >= maxJobs) {
        throw new ToolError("TOO_MANY_JOBS", `${running} jobs run already (the limit)`);
      }
      const jobId = String(++counter);
      const inputs: string[] = [];
      const job: FakeJob = {
        info: {
          jobId,
          command,
          state: "running",
          exitCode: null,
          startedAt: Date.now(),
          outputBytes: 0,
          droppedBytes: 0,
          pty: options.pty === true,
        },
        kept: Buffer.alloc(0),
        wake: new Set(),
        control: {
          jobId,
          command,
          inputs,
          print(text) {
            job.kept = Buffer.concat([job.kept, Buffer.from(text, "utf8")]);
            job.info.outputBytes += Buffer.byteLength(text, "utf8");
            const over = job.kept.length - keepBytes;
            if (over > 0) {
              job.kept = job.kept.subarray(over);
              job.info.droppedBytes += over;
            }
            notify(job);
          },
          exit: (exitCode, signal) => end(job, exitCode, signal),
        },
      };
      jobs.set(jobId, job);
      onStart(job.control);
      return { ...job.info };
    },

    async output(jobId: string, options: JobOutputOptions = {}) {
      const { since = 0, waitMs = 0, until, maxBytes = 40_000 } = options;
      const job = find(jobId);
      const pattern = until === undefined ? undefined : new RegExp(until);
      const done = () => {
        const result = read(job, since, maxBytes, pattern);
        const hasOutput = result.output !== "";
        return job.info.state !== "running" || (pattern === undefined ? hasOutput : result.matched);
      };
      if (!done() && waitMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(finish, waitMs);
          function finish() {
            clearTimeout(timer);
            job.wake.delete(check);
            resolve();
          }
          function check() {
            if (done()) finish();
          }
          job.wake.add(check);
        });
      }
      return read(job, since, maxBytes, pattern);
    },

    async input(jobId: string, text: string) {
      const job = find(jobId);
      if (job.info.state !== "running") {
        throw new ToolError("CONFLICT", `job ${jobId} has ended`);
      }
      job.control.inputs.push(text);
    },

    async kill(jobId: string) {
      const job = find(jobId);
      end(job, null, "SIGTERM");
      return { ...job.info };
    },

    async list() {
      return [...jobs.values()].map((job) => ({ ...job.info }));
    },
  };

  return {
    jobs: sandboxJobs,
    /** The control of job `jobId`. */
    job: (jobId: string): FakeJobControl => find(jobId).control,
  };
}

/** A client whose three methods refuse and whose `jobs` are `jobs`. */
export function clientWithJobs(jobs: SandboxJobs): JobSandboxClient {
  return { ...clientWithoutJobs(), jobs };
}

/** A client whose three methods refuse and that offers no jobs. */
export function clientWithoutJobs(): Omit<JobSandboxClient, "jobs"> {
  const refuse = async (): Promise<never> => {
    throw new Error("this fake client runs no commands and holds no files");
  };
  return { exec: refuse as () => Promise<ExecResult>, readFile: refuse, writeFile: refuse };
}
