import type net from "node:net";
import path from "node:path";
import { ToolError } from "@pleach/core";
import type { ExecResult, KeptOutput } from "@pleach/core/sandbox";
import { listenOnLoopback, publishedPorts } from "../network/published-ports.js";
import { fitsInArgument } from "../os/command-text.js";
import type { CommandInvocation, SessionInvocation } from "../os/command-wrapper.js";
import { runInSession, type SessionRunOptions } from "../os/session-run.js";
import { SessionSandbox } from "../os/session-sandbox.js";
import { JobTable } from "./job-table.js";
import { KEPT_OUTPUT_FOLDER, keptOutputName } from "./kept-path.js";

/** Options of a local sandbox's session (`session` of `createLocalSandbox`). */
export interface LocalSessionOptions {
  /**
   * Background jobs running at once; `job_output` and the others go on working for ended ones.
   * @default 8
   */
  maxJobs?: number;
  /**
   * Bytes of output kept per job, the newest: a reader further behind is told how much it missed.
   * @default 1_048_576
   */
  maxJobOutputBytes?: number;
  /**
   * Bytes of whole outputs kept for the session (`fullOutput` of a result, in `/run/pleach-output/`
   * inside the session sandbox, in memory, never in the workspace): past it the oldest are
   * removed; one output alone keeps at most this.
   * @default 268_435_456
   */
  maxKeptOutputBytes?: number;
  /**
   * TCP ports of the session's jobs to publish on the host's loopback (127.0.0.1 only): a job
   * listening on one of them inside the session sandbox answers the host's clients there (a
   * browser, a host-side test). The host listens from the session's first command.
   * @default none
   */
  publish?: readonly number[];
}

/** Prepares a command as the client's wrapper confines it, asking for a session sandbox. */
export type PrepareCommand = (
  command: string,
  options: { cwd?: string; env?: Record<string, string> },
) => Promise<CommandInvocation>;

/**
 * A local sandbox's session: the one session sandbox its commands run in and its jobs live in,
 * replaced when the policy it was built from changes while no job runs; the jobs; the kept
 * outputs. {@link close} ends it all.
 */
export class LocalSession {
  readonly #root: string;
  readonly #prepare: PrepareCommand;
  readonly #lookNow: () => Promise<void>;
  readonly #maxKept: number;
  #sandbox: SessionSandbox | undefined;
  /** Every sandbox of the session still alive: the current one and retired ones still running commands. */
  readonly #alive = new Set<SessionSandbox>();
  #key: string | undefined;
  /** No session sandbox can start here (no trusted Perl, a host refusing it): run one-off. */
  #unavailable = false;
  /** Why the session's jobs were stopped, for the next command to say. */
  #stopped: string | undefined;
  #closed = false;
  #nextKept = 0;
  /** Kept outputs, oldest first, with their sizes. */
  #kept: { name: string; bytes: number }[] = [];
  readonly jobs: JobTable;
  readonly #publish: number[];
  /** The host's listeners of published ports, once started. */
  #listening: Promise<net.Server[]> | undefined;
  /** Why a port could not be published, for the next command to say. */
  #publishProblems: string[] = [];

  /**
   * @param lookNow moves aside what appeared at protected paths of the workspace (and makes inert
   *   the repositories that did): called once the jobs that may have made one are stopped.
   */
  constructor(
    root: string,
    prepare: PrepareCommand,
    options: LocalSessionOptions = {},
    lookNow: () => Promise<void> = async () => {},
  ) {
    this.#root = root;
    this.#prepare = prepare;
    this.#lookNow = lookNow;
    this.#maxKept = options.maxKeptOutputBytes ?? 256 * 1024 * 1024;
    this.#publish = publishedPorts(options.publish);
    this.jobs = new JobTable(
      (command, jobOptions, events) => this.#launch(command, jobOptions, events),
      {
        maxJobs: options.maxJobs ?? 8,
        maxOutputBytes: options.maxJobOutputBytes ?? 1024 * 1024,
      },
    );
  }

  /**
   * The session sandbox for a command prepared with `session`; `undefined` when it must run in a
   * sandbox of its own, with why when that is not the usual (its jobs hold a sandbox of other rules).
   */
  async sandboxFor(
    session: SessionInvocation | undefined,
  ): Promise<{ sandbox?: SessionSandbox; note?: string }> {
    if (this.#closed) throw closedError();
    if (session === undefined || this.#unavailable) return {};
    const current = this.#sandbox;
    const changed = current?.alive ? current.changedMount() : undefined;
    // Said once, by the command after the sandbox stopped itself (see `SessionSandbox.stoppedFor`).
    let stopped = this.#stopped;
    this.#stopped = undefined;
    if (this.#publish.length > 0 && this.#listening === undefined) {
      this.#listening = this.#listen();
      await this.#listening;
    }
    if (current !== undefined && changed !== undefined) {
      // Its mount there is gone: whatever runs in it could write the path. Fail closed.
      if (this.jobs.running > 0) stopped = stoppedJobsNote(path.relative(this.#root, changed));
      await current.destroy();
      this.#sandbox = undefined;
    } else if (current?.alive && this.#key !== session.key) {
      if (this.jobs.running > 0) {
        return {
          note:
            "this command ran in a sandbox of its own, apart from the session's jobs, which cannot be reached from it: " +
            "the workspace's protected paths or the sandbox's rules changed since they started. End the jobs (job_kill) to run commands beside them again.",
        };
      }
      // Commands still running in it finish there; it goes once they are done.
      current.retire();
      this.#sandbox = undefined;
    }
    if (this.#sandbox === undefined || !this.#sandbox.alive) {
      this.#key = session.key;
      // Kept outputs live in the sandbox's memory: those of one that is gone are gone.
      this.#kept = [];
      let started: SessionSandbox | undefined;
      this.#sandbox = new SessionSandbox(
        {
          ...session.spec,
          onAppeared: (target) => {
            // A foreground command's own is moved aside when it ends; a job could make it again
            // at any moment, and the host's programs use it meanwhile: the jobs are stopped.
            if (started === undefined || this.jobs.running === 0) return;
            // A look that fails here (the workspace removed after close, say) is taken again
            // from the same last look before the next command and at close.
            void started
              .stopForAppeared(target)
              .then(() => this.#lookNow())
              .catch(() => {});
          },
          kept: { path: KEPT_OUTPUT_FOLDER, sizeBytes: 2 * this.#maxKept },
          publish: this.#publish.length > 0,
        },
        (gone) => {
          this.#alive.delete(gone);
          if (gone.stoppedFor !== undefined && gone.stoppedFor.running > 0) {
            const shown = path.relative(this.#root, gone.stoppedFor.path);
            this.#stopped =
              gone.stoppedFor.appeared === true ? appearedJobsNote(shown) : stoppedJobsNote(shown);
          }
          if (this.#sandbox === gone) this.#sandbox = undefined;
        },
      );
      started = this.#sandbox;
      this.#alive.add(this.#sandbox);
    }
    const sandbox = this.#sandbox;
    if (sandbox.alive && this.#publishProblems.length > 0) {
      stopped = [stopped, ...this.#publishProblems].filter((line) => line !== undefined).join("\n");
      this.#publishProblems = [];
    }
    const note = stopped === undefined ? {} : { note: stopped };
    if (!(await sandbox.ready)) {
      this.#unavailable = true;
      return note;
    }
    return sandbox.alive ? { sandbox, ...note } : note;
  }

  /** Run a foreground command in `sandbox`, keeping its whole output when asked and long enough. */
  async run(
    sandbox: SessionSandbox,
    invocation: SessionInvocation,
    options: Omit<SessionRunOptions, "keep"> & { fullOutputOverBytes?: number | undefined },
  ): Promise<ExecResult | undefined> {
    if (!fitsInArgument(invocation.command.command)) return undefined;
    const { fullOutputOverBytes, ...runOptions } = options;
    const keptFolder = sandbox.keptFolder;
    let name: string | undefined;
    if (fullOutputOverBytes !== undefined && keptFolder !== undefined) {
      this.#nextKept += 1;
      name = `cmd-${this.#nextKept}.log`;
    }
    const run = runInSession(sandbox, invocation.command, {
      ...runOptions,
      ...(name === undefined ? {} : { keep: { name, maxBytes: this.#maxKept } }),
    });
    if (run === undefined) return undefined;
    const { result, outputBytes, kept } = await run;
    if (name === undefined || fullOutputOverBytes === undefined) return result;
    if (!kept || outputBytes <= fullOutputOverBytes || !sandbox.alive) {
      if (kept) sandbox.removeKept(name);
      return result;
    }
    const bytes = Math.min(outputBytes, this.#maxKept);
    this.#keep(sandbox, name, bytes);
    const fullOutput: KeptOutput = { path: `${KEPT_OUTPUT_FOLDER}/${name}`, bytes };
    if (outputBytes > bytes) fullOutput.droppedBytes = outputBytes - bytes;
    return { ...result, fullOutput };
  }

  /** Listen on the published ports; each client goes to the session sandbox of the moment. */
  async #listen(): Promise<net.Server[]> {
    const servers: net.Server[] = [];
    for (const port of this.#publish) {
      const listening = await listenOnLoopback(port, (client) => {
        const sandbox = this.#sandbox;
        if (sandbox?.alive === true) sandbox.publish(port, client);
        else client.destroy();
      });
      if (typeof listening === "string") this.#publishProblems.push(`[sandbox: ${listening}]`);
      else servers.push(listening);
    }
    return servers;
  }

  /** Record a kept output, removing the oldest past the session's bound. */
  #keep(sandbox: SessionSandbox, name: string, bytes: number): void {
    this.#kept.push({ name, bytes });
    let total = this.#kept.reduce((sum, each) => sum + each.bytes, 0);
    while (total > this.#maxKept && this.#kept.length > 1) {
      const oldest = this.#kept.shift();
      if (oldest === undefined) break;
      sandbox.removeKept(oldest.name);
      total -= oldest.bytes;
    }
  }

  /**
   * The name of the kept output that a path names: exactly `/run/pleach-output/NAME` (see
   * `keptOutputName`), read through the session sandbox whether or not it still holds it (one
   * that is gone answers `NOT_FOUND`, never the host's `/run`); `undefined` for any other path,
   * which the usual rules on workspace paths judge (an absolute path outside it is refused).
   */
  keptName(requested: unknown): string | undefined {
    return keptOutputName(requested);
  }

  /** Read a kept output through the session sandbox: at most `maxBytes`, else `TOO_LARGE`. */
  async readKept(name: string, maxBytes: number): Promise<Buffer> {
    const sandbox = this.#sandbox;
    const folder = sandbox?.keptFolder;
    if (!sandbox?.alive || folder === undefined || keptOutputName(`${folder}/${name}`) !== name) {
      throw keptMissing(name);
    }
    const command =
      `f=${name}; test -f "$f" && test ! -h "$f" || exit 3; ` +
      `stat -c %s -- "$f"; head -c ${maxBytes + 1} -- "$f" | base64 -w0`;
    const run = runInSession(
      sandbox,
      { cwd: folder, command, env: { PATH: "/usr/bin:/bin" } },
      { timeoutMs: 60_000, maxOutputBytes: Math.ceil(((maxBytes + 64) * 4) / 3) + 64 },
    );
    const result = run === undefined ? undefined : (await run).result;
    if (result?.exitCode === 3) throw keptMissing(name);
    if (result?.exitCode !== 0) {
      throw new ToolError(
        "INTERNAL",
        `the kept output ${name} could not be read: ${result?.stderr ?? "the session sandbox is gone"}`,
      );
    }
    const [size = "", encoded = ""] = result.stdout.split("\n");
    if (Number(size) > maxBytes) {
      throw new ToolError(
        "TOO_LARGE",
        `${KEPT_OUTPUT_FOLDER}/${name} holds ${Number(size)} bytes, more than the ${maxBytes} asked for; search it or read part of it with bash (grep -n PATTERN ${KEPT_OUTPUT_FOLDER}/${name}, sed -n '1,200p' ${KEPT_OUTPUT_FOLDER}/${name})`,
        { details: { bytes: Number(size), maxBytes } },
      );
    }
    return Buffer.from(encoded, "base64");
  }

  async #launch(
    command: string,
    options: Parameters<JobTable["start"]>[1] & { pty: boolean },
    events: Parameters<SessionSandbox["spawn"]>[1],
  ) {
    const invocation = await this.#prepare(command, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    try {
      const session = invocation.kind === "session" ? invocation : undefined;
      if (session === undefined || !fitsInArgument(command))
        throw jobsUnavailable(session === undefined);
      const { sandbox, note } = await this.sandboxFor(session);
      if (sandbox === undefined) {
        throw note === undefined
          ? jobsUnavailable(true)
          : new ToolError(
              "CONFLICT",
              "no new job can start: the workspace's protected paths or the sandbox's rules changed since the session's running jobs started, and a new job must share their sandbox. End them (job_kill) and start again.",
            );
      }
      // A job's start has no notes: the next command says why the earlier jobs were stopped.
      if (note !== undefined) this.#stopped = note;
      const started = sandbox.spawn(
        {
          cwd: session.command.cwd,
          command,
          env: session.command.env,
          stdin: true,
          pty: options.pty,
        },
        events,
      );
      if (started === undefined) throw jobsUnavailable(true);
      return started;
    } finally {
      await invocation.release?.();
    }
  }

  /** End the session: every job and command, the sandbox, the kept outputs. */
  async close(): Promise<void> {
    this.#closed = true;
    this.jobs.close();
    await Promise.all([...this.#alive].map((sandbox) => sandbox.destroy()));
    this.#sandbox = undefined;
    const servers = (await this.#listening) ?? [];
    await Promise.all(
      servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    );
  }
}

function stoppedJobsNote(changed: string): string {
  return (
    `the session's background jobs and commands were stopped: ${changed} was removed or replaced on the host while they ran, ` +
    "which took its protection away from their sandbox. This command ran in a new one; start the jobs again (bash with background: true)."
  );
}

function appearedJobsNote(made: string): string {
  return (
    `the session's background jobs and commands were stopped: ${made}, a protected path, was made while they ran, and a job could make it again at any moment; pleach moved it aside (see the note on it). ` +
    "This command ran in a new sandbox; start the jobs again (bash with background: true), and do not make that path."
  );
}

function closedError(): ToolError {
  return new ToolError(
    "UNSUPPORTED",
    "this sandbox's session has ended (closed or released); acquire a new one",
  );
}

function keptMissing(name: string): ToolError {
  return new ToolError(
    "NOT_FOUND",
    `${KEPT_OUTPUT_FOLDER}/${name} is not kept (any more): kept outputs live as long as the session's sandbox, the newest within its bound`,
  );
}

function jobsUnavailable(noSessionSandbox: boolean): ToolError {
  return new ToolError(
    "UNSUPPORTED",
    noSessionSandbox
      ? "background jobs need a session sandbox, which this host cannot run here (it needs bubblewrap in read-only or workspace-write mode, /usr/bin/perl); run the command in the foreground"
      : "this command is too long to run as a job (over 128 KiB); put it in a script file and run that",
  );
}
