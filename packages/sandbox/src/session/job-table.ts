import { ToolError } from "@pleach/core";
import type {
  JobInfo,
  JobOutput,
  JobOutputOptions,
  JobStartOptions,
  SandboxJobs,
} from "@pleach/core/sandbox";
import { checkEnvironment, checkJobInput } from "@pleach/core/sandbox";
import { exitCodeOf, signalName } from "../os/exit-status.js";
import type { SessionProcess, SessionProcessEvents } from "../os/session-processes.js";
import { OutputLog } from "./output-log.js";
import { UntilMatcher } from "./until-matcher.js";

/** Starts a job's command in the session sandbox, with a stdin pipe. */
export type JobLauncher = (
  command: string,
  options: JobStartOptions & { pty: boolean },
  events: SessionProcessEvents,
) => Promise<SessionProcess>;

/** Limits of a session's jobs. */
export interface JobLimits {
  /** Jobs running at once. */
  maxJobs: number;
  /** Bytes of output kept per job (the newest). */
  maxOutputBytes: number;
}

/** The longest `waitMs` honoured, in milliseconds (ten minutes). */
const MAX_JOB_WAIT_MS = 600_000;
const DEFAULT_READ_BYTES = 40_000;
/** After `kill`'s TERM, how long before KILL. */
const KILL_GRACE_MS = 1_000;

interface Job {
  info: JobInfo;
  log: OutputLog;
  process: SessionProcess | undefined;
  inputOpen: boolean;
  killed: boolean;
  status: number | undefined;
  gone: Promise<void>;
  /** Called on every change (output, end), to wake readers. */
  waiters: Set<() => void>;
}

/**
 * The jobs of one session: each a command in the session sandbox under its own keeper, its
 * output kept in an {@link OutputLog}, read by cursor, waited for by readers. A job ends when its
 * main process exits: what it left running is then killed, as for a foreground command.
 */
export class JobTable implements SandboxJobs {
  readonly #jobs = new Map<string, Job>();
  #next = 0;
  /** Jobs being launched: they count against the limit before they are listed. */
  #starting = 0;
  readonly #until = new UntilMatcher();

  constructor(
    private readonly launch: JobLauncher,
    private readonly limits: JobLimits,
  ) {}

  /** Jobs still running. */
  get running(): number {
    let count = 0;
    for (const job of this.#jobs.values()) if (job.info.state === "running") count += 1;
    return count;
  }

  async start(command: string, options: JobStartOptions = {}): Promise<JobInfo> {
    if (typeof command !== "string" || command.trim() === "") {
      throw new ToolError("INVALID_INPUT", "a job needs a non-empty command string");
    }
    // The session server's requests are NUL-separated: a NUL would end the command there.
    if (command.includes("\0")) {
      throw new ToolError("INVALID_INPUT", "the command contains a NUL byte");
    }
    checkEnvironment(options.env);
    if (this.running + this.#starting >= this.limits.maxJobs) {
      throw new ToolError(
        "TOO_MANY_JOBS",
        `this session already runs ${this.running + this.#starting} jobs, its limit; end one with job_kill (job_list shows them) before starting another`,
        { details: { maxJobs: this.limits.maxJobs } },
      );
    }
    this.#forgetEnded();
    this.#next += 1;
    const jobId = String(this.#next);
    let markGone: () => void = () => {};
    const job: Job = {
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
      log: new OutputLog(this.limits.maxOutputBytes),
      process: undefined,
      inputOpen: true,
      killed: false,
      status: undefined,
      gone: new Promise<void>((resolve) => {
        markGone = resolve;
      }),
      waiters: new Set(),
    };
    const wake = () => {
      job.info.outputBytes = job.log.total;
      job.info.droppedBytes = job.log.dropped;
      for (const waiter of [...job.waiters]) waiter();
    };
    this.#starting += 1;
    try {
      job.process = await this.launch(
        command,
        { ...options, pty: options.pty === true },
        {
          onData(_stream, data) {
            job.log.push(data);
            wake();
          },
          onExit(status) {
            job.status = status;
          },
          onGone() {
            job.inputOpen = false;
            const { info } = job;
            info.endedAt = Date.now();
            info.state = job.killed ? "killed" : "exited";
            if (job.status !== undefined && (job.status & 0x7f) === 0) {
              info.exitCode = exitCodeOf(`exit ${job.status}`);
            } else {
              info.signal = job.status === undefined ? "SIGKILL" : signalName(job.status & 0x7f);
            }
            markGone();
            wake();
          },
        },
      );
    } finally {
      this.#starting -= 1;
    }
    this.#jobs.set(jobId, job);
    return { ...job.info };
  }

  async output(jobId: string, options: JobOutputOptions = {}): Promise<JobOutput> {
    const job = this.#job(jobId);
    const since = checkCount(options.since ?? 0, "since");
    const maxBytes = Math.max(4, checkCount(options.maxBytes ?? DEFAULT_READ_BYTES, "maxBytes"));
    const waitMs = Math.min(checkCount(options.waitMs ?? 0, "waitMs"), MAX_JOB_WAIT_MS);
    const until = options.until === undefined ? undefined : pattern(options.until);
    const ready = async () => {
      if (job.info.state !== "running") return true;
      if (until === undefined) return job.log.total > since;
      return this.#until.test(until, job.log.bytesFrom(since).bytes.toString("utf8"));
    };
    if (waitMs > 0 && !options.abortSignal?.aborted && !(await ready())) {
      await new Promise<void>((resolve, reject) => {
        let checking = false;
        let again = false;
        const stop = (error?: unknown) => {
          clearTimeout(timer);
          job.waiters.delete(check);
          options.abortSignal?.removeEventListener("abort", onAbort);
          if (error === undefined) resolve();
          else reject(error);
        };
        // One test at a time: output that comes meanwhile is tested once the test ends.
        const check = () => {
          if (checking) {
            again = true;
            return;
          }
          checking = true;
          ready().then((done) => {
            checking = false;
            if (done) stop();
            else if (again) {
              again = false;
              check();
            }
          }, stop);
        };
        const onAbort = () => stop();
        const timer = setTimeout(onAbort, waitMs);
        job.waiters.add(check);
        options.abortSignal?.addEventListener("abort", onAbort, { once: true });
        // Output that came while the first test ran.
        check();
      });
    }
    const ended = job.info.state !== "running";
    const read = job.log.read(since, maxBytes, ended);
    const text = read.bytes.toString("utf8");
    const result: JobOutput = {
      output: text,
      since: read.since,
      next: read.next,
      skippedBytes: Math.max(0, read.since - since),
      job: { ...job.info },
    };
    if (until !== undefined) result.matched = await this.#until.test(until, text);
    return result;
  }

  async input(jobId: string, text: string): Promise<void> {
    const job = this.#job(jobId);
    if (typeof text !== "string") throw new ToolError("INVALID_INPUT", "text must be a string");
    if (job.info.state !== "running" || !job.inputOpen) {
      throw new ToolError(
        "CONFLICT",
        `job ${jobId} has ended (${describeEnd(job.info)}); its stdin is closed. Start it again to give it input.`,
      );
    }
    // Bounded per call and in what the job has not read yet: a job that never reads its stdin
    // would otherwise hold whatever is sent in the session server's memory.
    checkJobInput(text, job.process?.queuedInput ?? 0);
    // A remote launcher's input settles once its sandbox took it (or refused it: thrown here).
    await job.process?.input(Buffer.from(text));
  }

  async kill(jobId: string): Promise<JobInfo> {
    const job = this.#job(jobId);
    if (job.info.state === "running") {
      job.killed = true;
      job.process?.signal("TERM");
      const timer = setTimeout(() => job.process?.reap(), KILL_GRACE_MS);
      // The sandbox's pipes do not keep the process alive: this wait does, until the job is gone.
      const alive = setInterval(() => {}, KILL_GRACE_MS);
      await job.gone;
      clearTimeout(timer);
      clearInterval(alive);
    }
    return { ...job.info };
  }

  async list(): Promise<JobInfo[]> {
    return [...this.#jobs.values()].map((job) => ({ ...job.info }));
  }

  /** Let go of what the table holds besides its jobs (the worker that tests `until`). */
  close(): void {
    this.#until.close();
  }

  /** Keep at most four times the job limit of ended jobs, the newest. */
  #forgetEnded(): void {
    const ended = [...this.#jobs.values()].filter((job) => job.info.state !== "running");
    for (const job of ended.slice(0, Math.max(0, ended.length - 4 * this.limits.maxJobs + 1))) {
      this.#jobs.delete(job.info.jobId);
    }
  }

  #job(jobId: string): Job {
    const job = typeof jobId === "string" ? this.#jobs.get(jobId) : undefined;
    if (job === undefined) {
      const known = [...this.#jobs.keys()];
      throw new ToolError(
        "NOT_FOUND",
        `no job ${JSON.stringify(jobId)} in this session${known.length === 0 ? " (it has none)" : `; its jobs: ${known.join(", ")}`}. job_list shows them.`,
      );
    }
    return job;
  }
}

/** "exit 0", "killed by SIGTERM", ... */
function describeEnd(info: JobInfo): string {
  if (info.state === "running") return "running";
  const how = info.exitCode === null ? `signal ${info.signal ?? "?"}` : `exit ${info.exitCode}`;
  return info.state === "killed" ? `killed, ${how}` : how;
}

function checkCount(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new ToolError("INVALID_INPUT", `${name} must be an integer >= 0, got ${value}`);
  }
  return value;
}

/** `source` once checked to be a regular expression (tested by an {@link UntilMatcher}). */
function pattern(source: unknown): string {
  if (typeof source !== "string") throw new ToolError("INVALID_INPUT", "until must be a string");
  try {
    new RegExp(source);
    return source;
  } catch (error) {
    throw new ToolError(
      "INVALID_INPUT",
      `until is not a valid regular expression (${JSON.stringify(source)}): ${(error as Error).message}`,
    );
  }
}
