import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import type net from "node:net";
import { type CommandProxy, startCommandProxy } from "../network/command-proxy.js";
import type { DomainRules } from "../network/domain-rules.js";
import { SANDBOX_PROXY_FOLDER, sessionForwarder } from "../network/proxy-forwarder.js";
import { type ProcessKey, processKeyOf, processState } from "../process-key.js";
import type { ProtectedPath } from "./host-facts.js";
import { feedInputs, inputPipes } from "./launcher-inputs.js";
import { MountPoints } from "./mount-points.js";
import { pathState } from "./path-state.js";
import { acquirePlaceholders, type PlaceholderLease } from "./placeholders.js";
import {
  AnswerReader,
  inputRequest,
  plainRequest,
  runRequest,
  type ServerAnswer,
  type SessionRunRequest,
  sessionServerArguments,
} from "./session-server.js";

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

/** How long the server (and the proxy's forwarder) has to start. */
const START_TIMEOUT_MS = 5_000;
/** How long the server has to empty the private folders. */
const CLEAN_TIMEOUT_MS = 5_000;

/** One command for a session sandbox: its folder, text and whole environment. */
export interface SessionCommand {
  cwd: string;
  command: string;
  env: Readonly<Record<string, string>>;
}
/** After bubblewrap is gone, how long its pid 1 (and with it every process of the sandbox) has to go. */
const INIT_GONE_TIMEOUT_MS = 10_000;

/** What a session sandbox is built from. */
export interface SessionSandboxSpec {
  /** The bubblewrap binary. */
  file: string;
  /** The namespaces and mounts of a one-off sandbox for the policy (`bubblewrapSandboxArguments`). */
  sandboxArgs: readonly string[];
  /** What bubblewrap reads from fds 3, 4, ... (its seccomp filter). */
  inputs: readonly Uint8Array[];
  /** The protected paths it mounts over, whose placeholders it holds while it runs. */
  protectedPaths: readonly ProtectedPath[];
  /** How long placeholders stay after it stops. */
  placeholderIdleMs: number;
  /**
   * The folder of kept outputs: an absolute path in the workspace where a memory-backed folder of
   * at most `sizeBytes` is mounted (over an empty placeholder folder on the host).
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
}

/** Refusal lines of the proxy a session sandbox keeps for its commands' notes, the newest. */
const KEPT_REFUSALS = 100;

/** What a process of the session hears of itself. */
export interface SessionProcessEvents {
  onData(stream: "stdout" | "stderr", data: Buffer): void;
  /** Its main process ended with this wait status. */
  onExit(status: number): void;
  /**
   * Its keeper and every process of it are gone and all their output was read (also when the
   * sandbox died); the last event.
   */
  onGone(): void;
  /** Its output could not be kept (a file of that name stands in the folder, or it is full). */
  onNoKeep?(): void;
}

/** A command running in a session sandbox. */
export interface SessionProcess {
  readonly id: string;
  /** Bytes for its stdin (only when started with `stdin: true`). */
  input(bytes: Buffer): void;
  /** Bytes given to {@link input} that have not reached its stdin yet (the command has not read them). */
  readonly queuedInput: number;
  /** End its stdin. */
  endInput(): void;
  /** Send a signal to every process of it. */
  signal(name: "TERM" | "KILL"): void;
  /** Kill every process of it; `onGone` follows. */
  reap(): void;
}

/** A process of the sandbox, as the host follows it. */
interface ProcessEntry {
  events: SessionProcessEvents;
  closed: boolean;
  gone: boolean;
  exited: boolean;
  /** After its exit, how long its output may stay open before what it left is killed. */
  drainMs: number;
  drainTimer?: NodeJS.Timeout;
  /** Input bytes sent that the server has not said were taken. */
  queuedInput: number;
  reap(): void;
}

export class SessionSandbox {
  #child: ChildProcess | undefined;
  /** The sandbox's pid 1 as the host sees it: the last of the sandbox to go. */
  #init: ProcessKey | undefined;
  #lease: PlaceholderLease | undefined;
  /** The paths it mounts over, as they were when it started. */
  #mountPoints: MountPoints | undefined;
  /**
   * The mount point whose change on the host made it destroy itself, with how many processes
   * (commands and jobs) it was running then.
   */
  stoppedFor: { path: string; running: number } | undefined;
  #dead = false;
  #nextId = 0;
  readonly #processes = new Map<string, ProcessEntry>();
  readonly #reader = new AnswerReader();
  #onReady: ((ok: boolean) => void) | undefined;
  #gone: Promise<void> = Promise.resolve();
  /** Whether the kept-output folder is mounted. */
  #keptMounted = false;
  /** Destroy it once its last process is gone (see {@link retire}). */
  #retired = false;
  #cleaning = false;
  #onCleaned: (() => void) | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #proxy: CommandProxy | undefined;
  /** The proxy's forwarder: a process of the sandbox that is none of its commands. */
  #forwarder: { id: string; entry: ProcessEntry } | undefined;
  /** The proxy's newest refusal lines, and how many it made in all. */
  readonly #refusals: string[] = [];
  #refusalCount = 0;
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
    return (
      !this.#dead &&
      !this.#retired &&
      !this.#cleaning &&
      this.#onReady === undefined &&
      this.#child !== undefined &&
      this.#processes.size === 0
    );
  }

  /** How many processes of the session run (commands and jobs, until each is gone). */
  get running(): number {
    return this.#processes.size;
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
    return this.#refusalCount;
  }

  /**
   * The refusal lines its proxy made since `mark` ({@link refusalCount} then), each once: those of
   * a command and of the jobs that ran meanwhile, which share the proxy.
   */
  refusalsSince(mark: number): string[] {
    const count = Math.min(this.#refusalCount - mark, this.#refusals.length);
    return count <= 0 ? [] : [...new Set(this.#refusals.slice(-count))];
  }

  /** The kept-output folder (absolute, in the workspace) when it is mounted. */
  get keptFolder(): string | undefined {
    return this.#keptMounted ? this.spec.kept?.path : undefined;
  }

  async #start(): Promise<boolean> {
    const rules = this.spec.network;
    if (rules !== undefined) {
      const proxy = await startCommandProxy(rules, "bubblewrap", {
        onRefusal: (line) => {
          this.#refusalCount += 1;
          this.#refusals.push(line);
          if (this.#refusals.length > KEPT_REFUSALS) this.#refusals.shift();
        },
      });
      this.#proxy = proxy;
      if (this.#dead) {
        await proxy.close();
        return false;
      }
    }
    const proxyFolder = this.#proxy?.network.socketFolder;
    const proxyArgs =
      proxyFolder === undefined ? [] : ["--ro-bind", proxyFolder, SANDBOX_PROXY_FOLDER];
    const kept = this.spec.kept;
    const wanted: ProtectedPath[] = [...this.spec.protectedPaths];
    if (kept !== undefined) wanted.push({ path: kept.path, state: pathState(kept.path) });
    this.#lease = acquirePlaceholders(wanted, { idleMs: this.spec.placeholderIdleMs });
    // Stopped as soon as one changes on the host, rather than at the next command.
    this.#mountPoints = new MountPoints(this.#lease.protectedPaths, (changed) => {
      if (this.#dead) return;
      this.stoppedFor = { path: changed, running: this.#processes.size };
      void this.destroy();
    });
    const keptState = this.#lease.protectedPaths.find(({ path }) => path === kept?.path)?.state;
    this.#keptMounted =
      kept !== undefined && (keptState === "missing" || keptState === "directory");
    const statusFd = 3 + this.spec.inputs.length;
    const keptArgs =
      this.#keptMounted && kept !== undefined
        ? ["--size", String(kept.sizeBytes), "--tmpfs", kept.path]
        : [];
    const child = spawn(
      this.spec.file,
      [
        ...this.spec.sandboxArgs,
        ...proxyArgs,
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
    status?.on("data", (chunk: Buffer) => {
      for (const answer of this.#reader.push(chunk)) this.#answer(answer);
    });
    const gone = () => void this.destroy();
    child.once("exit", gone);
    child.once("error", gone);
    status?.once("close", gone);
    const ok = (await this.#whenReady()) && (this.#proxy === undefined || (await this.#forward()));
    this.#onReady = undefined;
    if (!ok) throw new Error("the session sandbox did not start");
    this.#init = childOf(child.pid);
    this.#armIdleTimer();
    return !this.#dead;
  }

  /** Settles with whether {@link #onReady} was called with true in time. */
  #whenReady(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), START_TIMEOUT_MS);
      this.#onReady = (ready) => {
        clearTimeout(timer);
        resolve(ready);
      };
    });
  }

  /** Start the proxy's forwarder in the sandbox: whether it listens. */
  #forward(): Promise<boolean> {
    const ready = this.#whenReady();
    let said = "";
    const forwarder = sessionForwarder();
    this.#forwarder = this.#launch(
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
      0,
    );
    return ready;
  }

  #answer(answer: ServerAnswer): void {
    if (answer.kind === "ready") {
      this.#onReady?.(true);
      return;
    }
    if (answer.kind === "cleaned") {
      this.#onCleaned?.();
      return;
    }
    const entry =
      this.#processes.get(answer.id) ??
      (answer.id === this.#forwarder?.id ? this.#forwarder.entry : undefined);
    if (entry === undefined) return;
    const { events } = entry;
    switch (answer.kind) {
      case "out":
        events.onData("stdout", answer.data);
        break;
      case "err":
        events.onData("stderr", answer.data);
        break;
      case "exit":
        entry.exited = true;
        events.onExit(answer.status);
        this.#reapWhenDrained(entry);
        break;
      case "closed":
        entry.closed = true;
        this.#reapWhenDrained(entry);
        // Its processes may be gone before the last of their output was read: gone follows it.
        if (entry.gone) this.#end(answer.id);
        break;
      case "nokeep":
        events.onNoKeep?.();
        break;
      case "took":
        entry.queuedInput = Math.max(0, entry.queuedInput - answer.bytes);
        break;
      case "gone":
        entry.gone = true;
        if (entry.closed) this.#end(answer.id);
        break;
      case "failed":
        this.#end(answer.id);
        break;
    }
  }

  /**
   * A command ends with its main process: once that has exited and its output has closed, or
   * `drainMs` after the exit (a background child may hold the output), what it left is killed.
   */
  #reapWhenDrained(entry: ProcessEntry): void {
    if (!entry.exited || entry.gone) return;
    if (entry.closed) {
      clearTimeout(entry.drainTimer);
      entry.reap();
    } else {
      entry.drainTimer ??= setTimeout(() => entry.reap(), entry.drainMs);
    }
  }

  /** A process is over: its processes gone and its output read (or the sandbox gone). */
  #end(id: string): void {
    if (id === this.#forwarder?.id) {
      // The network of its commands is gone with it; what they ask the proxy fails.
      const { entry } = this.#forwarder;
      this.#forwarder = undefined;
      entry.events.onGone();
      return;
    }
    const entry = this.#processes.get(id);
    if (entry === undefined) return;
    clearTimeout(entry.drainTimer);
    this.#processes.delete(id);
    entry.events.onGone();
    if (this.#processes.size > 0) return;
    if (this.#retired) void this.destroy();
    else this.#armIdleTimer();
  }

  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer);
    const idleMs = this.spec.idleMs;
    if (idleMs === undefined || this.#dead) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#processes.size === 0 && !this.#cleaning) void this.destroy();
    }, idleMs);
    this.#idleTimer.unref();
  }

  /**
   * Empty the private folders ({@link SessionSandboxSpec.cleanFolders}) of what commands left,
   * while none runs; `false` (and the sandbox destroyed) when the server did not answer in time.
   */
  async clean(): Promise<boolean> {
    if (this.#dead || this.#processes.size > 0 || this.#cleaning) return false;
    this.#cleaning = true;
    clearTimeout(this.#idleTimer);
    const done = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), CLEAN_TIMEOUT_MS);
      this.#onCleaned = () => {
        clearTimeout(timer);
        resolve(true);
      };
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
    if (this.#processes.size === 0) void this.destroy();
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
    if (
      this.#dead ||
      this.#retired ||
      this.#cleaning ||
      this.#onReady !== undefined ||
      this.#child === undefined
    ) {
      return undefined;
    }
    clearTimeout(this.#idleTimer);
    const { id, entry } = this.#launch(request, events, drainMs);
    this.#processes.set(id, entry);
    return {
      id,
      input: (bytes) => {
        if (bytes.length === 0) return;
        entry.queuedInput += bytes.length;
        this.#send(inputRequest(id, bytes));
      },
      get queuedInput() {
        return entry.queuedInput;
      },
      endInput: () => this.#send(plainRequest("eof", id)),
      signal: (name) => this.#send(plainRequest("signal", id, name)),
      reap: () => this.#send(plainRequest("reap", id)),
    };
  }

  /** Ask the server to start `request`: its id, and the entry its answers go to. */
  #launch(
    request: Omit<SessionRunRequest, "id">,
    events: SessionProcessEvents,
    drainMs: number,
  ): { id: string; entry: ProcessEntry } {
    this.#nextId += 1;
    const id = String(this.#nextId);
    const entry: ProcessEntry = {
      events,
      closed: false,
      gone: false,
      exited: false,
      drainMs,
      queuedInput: 0,
      reap: () => this.#send(plainRequest("reap", id)),
    };
    this.#send(runRequest({ ...request, id }));
    return { id, entry };
  }

  /** Delete a kept output. */
  removeKept(name: string): void {
    this.#send(plainRequest("remove", name));
  }

  /**
   * Kill the sandbox and everything in it (every command and job, the kept outputs), and let go
   * of its placeholders; settles once every process of it is gone (its placeholders kept if one
   * is still there after ten seconds).
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
    const proxyClosed = this.#proxy?.close();
    const lease = this.#lease;
    const init = this.#init;
    const running = child !== undefined && child.exitCode === null && child.signalCode === null;
    if (running) child.ref();
    // The placeholders stay until the sandbox is gone: removing a mount point detaches the mount.
    // Its pid 1 goes last, once every process of it is gone, which may be after bubblewrap.
    this.#gone = (
      running
        ? new Promise<void>((resolve) => child.once("exit", () => resolve()))
        : Promise.resolve()
    )
      .then(() => (init === undefined ? true : processGone(init)))
      .then(async (gone) => {
        await proxyClosed;
        if (gone) await lease?.release();
      });
    for (const id of [...this.#processes.keys()]) this.#end(id);
    if (this.#forwarder !== undefined) this.#end(this.#forwarder.id);
    this.onGone(this);
    return this.#gone;
  }
}

/** The one child of process `pid` (bubblewrap's: the sandbox's pid 1), when it can be told. */
function childOf(pid: number | undefined): ProcessKey | undefined {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ");
    return children.length === 1 ? processKeyOf(Number(children[0])) : undefined;
  } catch {
    return undefined;
  }
}

/** Settles with true once the process `key` is gone, with false if it is still there after the timeout. */
async function processGone(key: ProcessKey): Promise<boolean> {
  const deadline = performance.now() + INIT_GONE_TIMEOUT_MS;
  // The key is of this boot and pid namespace: it is its own vantage point.
  while (processState(key, key) === "alive") {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}
