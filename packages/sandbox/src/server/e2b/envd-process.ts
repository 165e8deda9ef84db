import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { isToolError } from "@pleach/core";
import { type SandboxJobs, sandboxJobsOf } from "@pleach/core/sandbox";
import type { HostedSandbox } from "../sandbox-registry.js";
import { createEventQueue } from "./event-queue.js";
import type { Process, ProcessSelector } from "./gen/process/process_pb.js";
import { commandOf, execEnd, jobEnd } from "./process-shapes.js";
import type { ProcessEntry, ProcessEventCase, ProcessTable } from "./process-table.js";
import { notSupported, toConnectError } from "./rpc-errors.js";

/** Options of {@link createProcessService}. */
export interface ProcessServiceOptions {
  /** The sandbox a request is for (found from its `E2b-Sandbox-Id` before the RPC runs). */
  sandboxOf(context: HandlerContext): HostedSandbox;
  /** The processes of a sandbox. */
  tableOf(sandbox: HostedSandbox): ProcessTable;
  /** The environment variables the sandbox was created with (`envVars`). */
  envOf(sandbox: HostedSandbox): Record<string, string>;
  /** How often a quiet stream carries a keepalive event. */
  heartbeatMs: number;
  /** Holds a foreground command until it is over (the server waits for them when it closes). */
  track(running: Promise<void>): void;
}

/** The most bytes of a job's output one stream event carries. */
const JOB_READ_BYTES = 64 * 1024;

type Selector = ProcessSelector["selector"];

/**
 * envd's process service over a hosted sandbox: `Start` runs the command confined as every
 * command of the sandbox is. Without stdin and a terminal it is a foreground command of the
 * client (stdout and stderr apart, the server's time and output limits); with either it is a job
 * of the sandbox's session, whose single output stream arrives as stdout (or as terminal output),
 * and which takes input and outlives its stream (`Connect` picks it up again).
 */
export function createProcessService({
  sandboxOf,
  tableOf,
  envOf,
  heartbeatMs,
  track,
}: ProcessServiceOptions): ServiceImpl<typeof Process> {
  const entryOf = (context: HandlerContext, selector: Selector | undefined): ProcessEntry => {
    const entry = tableOf(sandboxOf(context)).find(selector ?? { case: undefined });
    if (entry === undefined) {
      throw new ConnectError(
        `no process ${selector?.value ?? "(none named)"} in this sandbox: it never ran here or was forgotten after it ended; list the running ones with commands.list()`,
        Code.NotFound,
      );
    }
    return entry;
  };
  const jobsOf = (sandbox: HostedSandbox): SandboxJobs => {
    const jobs = sandboxJobsOf(sandbox.client);
    if (jobs === undefined) {
      throw notSupported(
        "a process with stdin or a terminal",
        "this sandbox runs no background jobs",
      );
    }
    return jobs;
  };

  /**
   * Mark ended the jobs the session reports ended or no longer knows, whether or not a stream
   * read them to their end, so that the table makes room for new processes.
   */
  const reap = async (sandbox: HostedSandbox): Promise<void> => {
    const jobs = sandboxJobsOf(sandbox.client);
    if (jobs === undefined) return;
    const table = tableOf(sandbox);
    const states = new Map((await jobs.list()).map((job) => [job.jobId, job.state]));
    for (const entry of table.running()) {
      if (entry.jobId !== undefined && states.get(entry.jobId) !== "running") table.end(entry);
    }
  };

  /** A job's events from `since`: its output, keepalives while it is quiet, then its end. */
  async function* jobEvents(
    jobs: SandboxJobs,
    table: ProcessTable,
    entry: ProcessEntry,
    since: number,
    signal: AbortSignal,
    pty: boolean,
  ): AsyncGenerator<ProcessEventCase> {
    let cursor = since;
    while (!signal.aborted) {
      const read = await jobs
        .output(entry.jobId as string, {
          since: cursor,
          waitMs: heartbeatMs,
          maxBytes: JOB_READ_BYTES,
          abortSignal: signal,
        })
        .catch((error: unknown) => {
          throw toConnectError(error);
        });
      cursor = read.next;
      if (read.output !== "") {
        yield {
          case: "data",
          value: { output: { case: pty ? "pty" : "stdout", value: Buffer.from(read.output) } },
        };
      } else if (read.job.state === "running") {
        yield { case: "keepalive", value: {} };
      }
      if (read.job.state !== "running" && read.next >= read.job.outputBytes) {
        table.end(entry);
        yield { case: "end", value: jobEnd(read.job) };
        return;
      }
    }
  }

  /**
   * A foreground command's events, as a listener sees them, until its end. It listens from the
   * call, not from the first read, so that an end that comes before the stream reads is not lost.
   */
  const listen = (entry: ProcessEntry, signal: AbortSignal): AsyncGenerator<ProcessEventCase> => {
    const queue = createEventQueue<ProcessEventCase | Error>(signal);
    const heartbeat = setInterval(() => queue.push({ case: "keepalive", value: {} }), heartbeatMs);
    const listener = (event: ProcessEventCase | Error | undefined) => {
      if (event !== undefined) return queue.push(event);
      clearInterval(heartbeat);
      queue.end();
    };
    entry.listeners.add(listener);
    signal.addEventListener("abort", () => clearInterval(heartbeat), { once: true });
    return (async function* () {
      try {
        for await (const event of queue) {
          if (event instanceof Error) throw toConnectError(event);
          yield event;
        }
      } finally {
        clearInterval(heartbeat);
        entry.listeners.delete(listener);
      }
    })();
  };

  const emit = (entry: ProcessEntry, event: ProcessEventCase | Error | undefined) => {
    for (const listener of entry.listeners) listener(event);
  };

  /** Run a foreground command; its events go to the entry's listeners. */
  const runForeground = (
    sandbox: HostedSandbox,
    table: ProcessTable,
    entry: ProcessEntry,
    command: string,
    options: { cwd?: string; env: Record<string, string>; timeoutMs: number | undefined },
  ) => {
    const controller = entry.controller as AbortController;
    sandbox.running.add(controller);
    const { defaultTimeoutMs, maxTimeoutMs, maxOutputBytes } = sandbox.limits;
    const running = sandbox.client
      .exec(command, {
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        env: options.env,
        abortSignal: controller.signal,
        timeoutMs: Math.min(options.timeoutMs ?? defaultTimeoutMs, maxTimeoutMs),
        maxOutputBytes,
        onOutput: (stream, text) =>
          emit(entry, {
            case: "data",
            value: { output: { case: stream, value: Buffer.from(text) } },
          }),
      })
      .then(
        (result): ProcessEventCase | Error => ({ case: "end", value: execEnd(result) }),
        (error: unknown): ProcessEventCase | Error => {
          // Killed through SendSignal: an end, as envd reports a process a signal ended.
          if (isToolError(error) && error.code === "ABORTED" && controller.signal.aborted) {
            return {
              case: "end",
              value: {
                exitCode: -1,
                exited: false,
                status: "signal: killed",
                error: String(controller.signal.reason),
              },
            };
          }
          return error instanceof Error ? error : new Error(String(error));
        },
      )
      .then((end) => {
        table.end(entry);
        emit(entry, end);
        emit(entry, undefined);
        sandbox.running.delete(controller);
        sandbox.lastUsed = Date.now();
      });
    track(running);
  };

  return {
    async *start(request, context) {
      const sandbox = sandboxOf(context);
      const config = request.process;
      if (config === undefined || config.cmd === "") {
        throw new ConnectError("Start needs process.cmd: the program to run", Code.InvalidArgument);
      }
      const command = commandOf(config);
      const env = { ...envOf(sandbox), ...config.envs };
      const cwd = config.cwd === undefined || config.cwd === "" ? undefined : config.cwd;
      const table = tableOf(sandbox);
      const tag = request.tag;
      if (table.full()) await reap(sandbox);
      if (request.stdin === true || request.pty !== undefined) {
        const jobs = jobsOf(sandbox);
        const pty = request.pty !== undefined;
        const job = await jobs
          .start(command, { ...(cwd === undefined ? {} : { cwd }), env, pty })
          .catch((error: unknown) => {
            throw toConnectError(error);
          });
        let entry: ProcessEntry;
        try {
          entry = table.add({ tag, config, jobId: job.jobId, controller: undefined });
        } catch (error) {
          // No room for it in the table (another Start took the last place): it does not run.
          await jobs.kill(job.jobId).catch(() => undefined);
          throw error;
        }
        yield { event: { event: { case: "start", value: { pid: entry.pid } } } };
        for await (const event of jobEvents(jobs, table, entry, 0, context.signal, pty))
          yield { event: { event } };
        return;
      }
      const entry = table.add({ tag, config, jobId: undefined, controller: new AbortController() });
      // The stream is the only way to its output: a client gone or past its deadline ends it.
      const events = listen(entry, context.signal);
      const onGone = () => entry.controller?.abort("the client went away");
      context.signal.addEventListener("abort", onGone, { once: true });
      runForeground(sandbox, table, entry, command, { cwd, env, timeoutMs: context.timeoutMs() });
      try {
        yield { event: { event: { case: "start", value: { pid: entry.pid } } } };
        for await (const event of events) yield { event: { event } };
      } finally {
        context.signal.removeEventListener("abort", onGone);
      }
    },

    async *connect(request, context) {
      const entry = entryOf(context, request.process?.selector);
      yield { event: { event: { case: "start", value: { pid: entry.pid } } } };
      if (entry.jobId === undefined) {
        if (entry.ended) {
          throw new ConnectError(
            `process ${entry.pid} has ended; its result went to the stream that started it`,
            Code.NotFound,
          );
        }
        for await (const event of listen(entry, context.signal)) yield { event: { event } };
        return;
      }
      const jobs = jobsOf(sandboxOf(context));
      const job = (await jobs.list()).find((candidate) => candidate.jobId === entry.jobId);
      const pty = job?.pty ?? false;
      for await (const event of jobEvents(
        jobs,
        tableOf(sandboxOf(context)),
        entry,
        job?.outputBytes ?? 0,
        context.signal,
        pty,
      )) {
        yield { event: { event } };
      }
    },

    async list(_request, context) {
      const sandbox = sandboxOf(context);
      await reap(sandbox);
      const processes = tableOf(sandbox)
        .running()
        .map((entry) => ({
          pid: entry.pid,
          config: entry.config,
          ...(entry.tag === undefined ? {} : { tag: entry.tag }),
        }));
      return { processes };
    },

    async sendInput(request, context) {
      await input(entryOf(context, request.process?.selector), request.input?.input.value, context);
      return {};
    },

    async streamInput(requests, context) {
      let entry: ProcessEntry | undefined;
      for await (const request of requests) {
        if (request.event.case === "start")
          entry = entryOf(context, request.event.value.process?.selector);
        else if (request.event.case === "data") {
          if (entry === undefined) {
            throw new ConnectError(
              "StreamInput needs its start event (the process) before data",
              Code.InvalidArgument,
            );
          }
          await input(entry, request.event.value.input?.input.value, context);
        }
      }
      return {};
    },

    async sendSignal(request, context) {
      const entry = entryOf(context, request.process?.selector);
      if (entry.jobId !== undefined) {
        await jobsOf(sandboxOf(context))
          .kill(entry.jobId)
          .catch((error: unknown) => {
            throw toConnectError(error);
          });
      } else entry.controller?.abort(`killed by a signal (${request.signal})`);
      return {};
    },

    closeStdin() {
      throw notSupported(
        "closing a process's stdin (closeStdin)",
        "have the program stop on an input it reads (a line such as `exit`), or kill it",
      );
    },

    update() {
      throw notSupported(
        "resizing a terminal (Update, pty.resize)",
        "start the process with the terminal size it needs",
      );
    },
  };

  async function input(
    entry: ProcessEntry,
    bytes: Uint8Array | undefined,
    context: HandlerContext,
  ) {
    if (entry.jobId === undefined) {
      throw new ConnectError(
        `process ${entry.pid} was started without stdin; start it with stdin: true (commands.run(cmd, { background: true, stdin: true })) to send it input`,
        Code.FailedPrecondition,
      );
    }
    await jobsOf(sandboxOf(context))
      .input(entry.jobId, Buffer.from(bytes ?? new Uint8Array()).toString("utf8"))
      .catch((error: unknown) => {
        throw toConnectError(error);
      });
  }
}
