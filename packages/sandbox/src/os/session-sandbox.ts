import { type ChildProcess, spawn } from "node:child_process";
import type net from "node:net";
import type { DomainRules } from "../network/domain-rules.js";
import { type SessionForwarder, SessionLinks } from "../network/session-links.js";
import type { ProtectedPath } from "../policy/protection.js";
import type { ProcessKey } from "../process-key.js";
import { feedInputs, inputPipes } from "./launcher-inputs.js";
import { MountPoints } from "./mount-points.js";
import {
  childOf,
  processGone,
  type SessionProcess,
  type SessionProcessEvents,
  SessionProcesses,
} from "./session-processes.js";
import {
  AnswerReader,
  plainRequest,
  type SessionRunRequest,
  sessionServerArguments,
} from "./session-server.js";

/** How long the server has to start (and the proxy's forwarder), or to empty the private folders. */
const SERVER_TIMEOUT_MS = 5_000;

/** What a session sandbox is built from. */
export interface SessionSandboxSpec {
  /** The bubblewrap binary. */
  file: string;
  /** The namespaces and mounts of a one-off sandbox for the policy (`bubblewrapSandboxArguments`). */
  sandboxArgs: readonly string[];
  /** What bubblewrap reads from fds 3, 4, ... (its seccomp filter). */
  inputs: readonly Uint8Array[];
  /** The protected paths (it mounts over those that exist: see `MountPoints`). */
  protectedPaths: readonly ProtectedPath[];
  /**
   * Told, from a watcher, when something appears at one of the missing `protectedPaths` while it
   * runs (a job or a command made it, or the host did).
   * @default nothing: what a command made is moved aside when it ends
   */
  onAppeared?: (target: string) => void;
  /**
   * The folder of kept outputs: an absolute path inside one of the sandbox's own memory folders
   * (`/run/pleach-output`, in its `/run`), where a memory-backed folder of at most `sizeBytes` is
   * mounted; bubblewrap makes its mount point there, so nothing is made in the workspace or on
   * the host.
   */
  kept?: { path: string; sizeBytes: number };
  /** Private folders a {@link SessionSandbox.clean} empties of what commands left there. */
  cleanFolders?: readonly string[];
  /** Destroy it once it has run no process for this long (a warm sandbox); absent: never. */
  idleMs?: number;
  /**
   * The rules of the domain proxy its commands reach the network through (`sandboxArgs` then
   * name no proxy folder: the sandbox binds that of its own proxy); absent: no network.
   */
  network?: DomainRules;
  /** Whether ports of its jobs may be published on the host's loopback (see {@link publish}). */
  publish?: boolean;
}

/**
 * A session sandbox: one bubblewrap sandbox that lives as long as a session (a provider's
 * `acquire` to `release`, `pleach mcp`'s process), in which every command of the session runs and
 * its background jobs live. Its server (`session-server.ts`, pid 1) runs each command under a
 * keeper of its own, so that what a command leaves behind is killed when it ends while the jobs
 * and the other commands run on. The sandbox is built from the same argv as a one-off sandbox for
 * the same policy, used only while that argv and the protected paths are unchanged (the session
 * decides), and dies with the host process (`--die-with-parent`, the pid namespace going with its
 * pid 1), taking every process of the session and its private folders (`/tmp`, the kept outputs'
 * memory-backed folder) with it.
 *
 * With network rules it holds a domain proxy on the host for its life, and a forwarder inside
 * beside the commands (as a one-off sandbox's, but started once), so that its commands and jobs
 * reach the network through the proxy under those rules; both end with the sandbox, cutting every
 * connection of its processes.
 */
export class SessionSandbox {
  #child: ChildProcess | undefined;
  /** The sandbox's pid 1 as the host sees it: the last of the sandbox to go. */
  #init: ProcessKey | undefined;
  /** The paths it mounts over, as they were when it started. */
  #mountPoints: MountPoints | undefined;
  /**
   * The mount point whose change on the host made it destroy itself, with how many processes
   * (commands and jobs) it was running then.
   */
  stoppedFor: { path: string; running: number; appeared?: true } | undefined;
  #dead = false;
  readonly #processes = new SessionProcesses(
    (request) => this.#send(request),
    () => {
      if (this.#retired) void this.destroy();
      else this.#armIdleTimer();
    },
  );
  #onReady: ((ok: boolean) => void) | undefined;
  #gone: Promise<void> = Promise.resolve();
  /** The kept-output folder (mounted whenever the spec asks for one). */
  #kept: SessionSandboxSpec["kept"];
  /** Destroy it once its last process is gone (see {@link retire}). */
  #retired = false;
  #cleaning = false;
  #onCleaned: (() => void) | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  /** Its domain proxy and published ports (see `SessionLinks`). */
  readonly #links = new SessionLinks();
  /** Settles once the server is ready (true) or failed to start (false). */
  readonly ready: Promise<boolean>;

  constructor(
    readonly spec: SessionSandboxSpec,
    private readonly onGone: (sandbox: SessionSandbox) => void,
  ) {
    this.ready = this.#start().catch(() => {
      void this.destroy();
      return false;
    });
  }

  get alive(): boolean {
    return !this.#dead;
  }

  /** Started, not retired, and running nothing: a command may run now. */
  get idle(): boolean {
    return this.#takesCommands && this.#processes.running === 0;
  }

  /** Started, not retired, and not cleaning: a command may start now. */
  get #takesCommands(): boolean {
    return (
      !this.#dead &&
      !this.#retired &&
      !this.#cleaning &&
      this.#onReady === undefined &&
      this.#child !== undefined
    );
  }

  /** How many processes of the session run (commands and jobs, until each is gone). */
  get running(): number {
    return this.#processes.running;
  }

  /**
   * A path it mounts over that is no longer what it mounted there (removed, or replaced, on the
   * host), or `undefined`: removing or replacing a mount point on the host detaches the mount over
   * it inside the sandbox, so that its processes could write there.
   */
  changedMount(): string | undefined {
    return this.#mountPoints?.changed();
  }

  /** How many refusals its proxy made so far: a mark for {@link refusalsSince}. */
  get refusalCount(): number {
    return this.#links.refusalCount;
  }

  /**
   * The refusal lines its proxy made since `mark` ({@link refusalCount} then), each once: those of
   * a command and of the jobs that ran meanwhile, which share the proxy.
   */
  refusalsSince(mark: number): string[] {
    return this.#links.refusalsSince(mark);
  }

  /** The kept-output folder (absolute, inside the sandbox) when it is mounted. */
  get keptFolder(): string | undefined {
    return this.#kept?.path;
  }

  async #start(): Promise<boolean> {
    await this.#links.start({
      ...(this.spec.network === undefined ? {} : { rules: this.spec.network }),
      ...(this.spec.publish === undefined ? {} : { publish: this.spec.publish }),
    });
    if (this.#dead) {
      // Destroyed while they started: `destroy` closed them before they were there.
      await this.#links.close();
      return false;
    }
    // Stopped as soon as a protected path it mounts over changes on the host, rather than at
    // the next command; what appears at a missing one is the session's to judge.
    this.#mountPoints = new MountPoints(this.spec.protectedPaths, (changed, how) => {
      if (this.#dead) return;
      if (how === "appeared") return this.spec.onAppeared?.(changed);
      this.stoppedFor = { path: changed, running: this.#processes.running };
      void this.destroy();
    });
    const kept = this.spec.kept;
    // Mounted after the sandbox's own `--tmpfs /run`, inside it: nothing is made on the host.
    this.#kept = kept;
    const statusFd = 3 + this.spec.inputs.length;
    const keptArgs =
      kept === undefined ? [] : ["--size", String(kept.sizeBytes), "--tmpfs", kept.path];
    const child = spawn(
      this.spec.file,
      [
        ...this.spec.sandboxArgs,
        ...this.#links.bindArguments(),
        ...keptArgs,
        ...sessionServerArguments({
          statusFd,
          keptFolder: this.keptFolder,
          ...(this.spec.cleanFolders === undefined ? {} : { cleanFolders: this.spec.cleanFolders }),
        }),
      ],
      {
        env: { PATH: "/usr/bin:/bin" },
        stdio: ["pipe", "ignore", "ignore", ...inputPipes(this.spec.inputs), "pipe"],
        detached: true,
      },
    );
    this.#child = child;
    feedInputs(child, this.spec.inputs);
    child.unref();
    for (const stream of [child.stdin, ...child.stdio.slice(3)]) {
      (stream as net.Socket | null)?.unref?.();
    }
    child.stdin?.on("error", () => {
      // The server is gone; its exit says so.
    });
    const status = child.stdio[statusFd] as net.Socket | null;
    const reader = new AnswerReader();
    status?.on("data", (chunk: Buffer) => {
      for (const answer of reader.push(chunk)) {
        if (answer.kind === "ready") this.#onReady?.(true);
        else if (answer.kind === "cleaned") this.#onCleaned?.();
        else this.#processes.answer(answer);
      }
    });
    const gone = () => void this.destroy();
    child.once("exit", gone);
    child.once("error", gone);
    status?.once("close", gone);
    let ok = await answered((answer) => (this.#onReady = answer));
    for (const forwarder of this.#links.forwarders()) ok &&= await this.#forward(forwarder);
    this.#onReady = undefined;
    if (!ok) throw new Error("the session sandbox did not start");
    this.#init = childOf(child.pid);
    this.#armIdleTimer();
    return !this.#dead;
  }

  /** Start a forwarder (the proxy's, the published ports') in the sandbox: whether it is ready. */
  #forward(forwarder: SessionForwarder): Promise<boolean> {
    const ready = answered((answer) => (this.#onReady = answer));
    let said = "";
    // The network of its commands goes with it; what they ask the proxy then fails.
    this.#processes.launch(
      { cwd: "/", command: forwarder.command, env: forwarder.env, stdin: false, pty: false },
      {
        onData: (stream, data) => {
          if (stream !== "stdout") return;
          said += data.toString("utf8");
          if (said.includes("\n")) this.#onReady?.(said === "ready\n");
        },
        onExit: () => this.#onReady?.(false),
        onGone: () => this.#onReady?.(false),
      },
      { drainMs: 0, counted: false },
    );
    return ready;
  }

  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer);
    const idleMs = this.spec.idleMs;
    if (idleMs === undefined || this.#dead) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#processes.running === 0 && !this.#cleaning) void this.destroy();
    }, idleMs);
    this.#idleTimer.unref();
  }

  /**
   * Empty the private folders ({@link SessionSandboxSpec.cleanFolders}) of what commands left,
   * while none runs; `false` (and the sandbox destroyed) when the server did not answer in time.
   */
  async clean(): Promise<boolean> {
    if (this.#dead || this.#processes.running > 0 || this.#cleaning) return false;
    this.#cleaning = true;
    clearTimeout(this.#idleTimer);
    const done = await answered((answer) => {
      this.#onCleaned = () => answer(true);
      this.#send(plainRequest("clean"));
    });
    this.#onCleaned = undefined;
    this.#cleaning = false;
    if (!done) await this.destroy();
    else this.#armIdleTimer();
    return done && !this.#dead;
  }

  /**
   * Take no more commands, and destroy it once those running are done (at once when none is):
   * the session has moved to a sandbox of newer rules.
   */
  retire(): void {
    this.#retired = true;
    if (this.#processes.running === 0) void this.destroy();
  }

  #send(request: Buffer): void {
    if (!this.#dead) this.#child?.stdin?.write(request);
  }

  /**
   * Start a command; `undefined` when the sandbox is not ready or gone (run it some other way).
   * Its events come until `onGone`. Once its main process has exited and its output has closed,
   * or `drainMs` after the exit, every process it left is killed.
   */
  spawn(
    request: Omit<SessionRunRequest, "id">,
    events: SessionProcessEvents,
    { drainMs = 250 }: { drainMs?: number } = {},
  ): SessionProcess | undefined {
    if (!this.#takesCommands) return undefined;
    clearTimeout(this.#idleTimer);
    return this.#processes.launch(request, events, { drainMs, counted: true });
  }

  /**
   * Relay a host client to `port` on the sandbox's loopback, where a job may listen; the client
   * is closed when nothing listens there or the sandbox publishes no ports.
   */
  publish(port: number, client: net.Socket): void {
    if (this.#dead) client.destroy();
    else this.#links.publish(port, client);
  }

  /**
   * Destroy it, and everything in it, because something appeared at the missing protected path
   * `target` while jobs ran (a job may make it again at any moment): see {@link stoppedFor}.
   */
  stopForAppeared(target: string): Promise<void> {
    if (!this.#dead)
      this.stoppedFor = { path: target, running: this.#processes.running, appeared: true };
    return this.destroy();
  }

  /** Delete a kept output. */
  removeKept(name: string): void {
    this.#send(plainRequest("remove", name));
  }

  /**
   * Kill the sandbox and everything in it (every command and job, the kept outputs); settles once
   * every process of it is gone.
   */
  destroy(): Promise<void> {
    if (this.#dead) return this.#gone;
    this.#dead = true;
    this.#mountPoints?.close();
    clearTimeout(this.#idleTimer);
    this.#onReady?.(false);
    this.#onCleaned?.();
    const child = this.#child;
    if (child?.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    // Every connection of its processes ends here, whatever the sandbox takes to go.
    const proxyClosed = this.#links.close();
    const init = this.#init;
    const running = child !== undefined && child.exitCode === null && child.signalCode === null;
    if (running) child.ref();
    // Its pid 1 goes last, once every process of it is gone, which may be after bubblewrap: what
    // looks at the workspace after the session must not look before its jobs are gone.
    this.#gone = (
      running
        ? new Promise<void>((resolve) => child.once("exit", () => resolve()))
        : Promise.resolve()
    )
      .then(() => (init === undefined ? true : processGone(init)))
      .then(async () => {
        await proxyClosed;
      });
    this.#processes.endAll();
    this.onGone(this);
    return this.#gone;
  }
}

/** Settles with what `arm`'s callback is given, or with `false` after {@link SERVER_TIMEOUT_MS}. */
function answered(arm: (answer: (ok: boolean) => void) => void): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), SERVER_TIMEOUT_MS);
    arm((ok) => {
      clearTimeout(timer);
      resolve(ok);
    });
  });
}
