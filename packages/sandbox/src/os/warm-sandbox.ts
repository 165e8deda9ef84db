import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { ToolError } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";
import { CommandOutput } from "../bounded-output.js";
import type { WarmRunOptions } from "../run-options.js";

export type { WarmRunOptions } from "../run-options.js";

import { fitsInArgument } from "./command-text.js";
import { exitCodeOf } from "./exit-status.js";
import type { ProtectedPath } from "./host-facts.js";
import { feedInputs, inputPipes } from "./launcher-inputs.js";
import { acquirePlaceholders, type PlaceholderLease } from "./placeholders.js";
import { createControlFolder, removeControlFolder } from "./warm-control.js";
import { REAP_REQUEST, runRequest, warmServerArguments } from "./warm-server.js";

/**
 * A warm sandbox: one bubblewrap sandbox kept running between commands, with a small server of
 * ours inside (Perl, from the host's read-only root) that runs each command as a fresh
 * `/bin/bash -c`, so that commands run back to back pay a fork and an exec instead of building a
 * sandbox each (mount namespace, bind mounts, tmpfs, user and pid namespaces).
 *
 * What a command sees is what a sandbox of its own gives it, and nothing it does outlives it:
 * - The sandbox is built from the same argv as a one-off sandbox for the same policy and host
 *   facts (the wrapper reuses it only while both, and the identity of every protected path, are
 *   unchanged).
 * - The server runs one command at a time. When the command has exited and its output has closed
 *   (or the drain time has passed), every other process in the sandbox's pid namespace is killed
 *   (`kill(-1, SIGKILL)` from the server, the namespace's pid 1), and the server waits until they
 *   are gone. Then what the command left in the sandbox's private
 *   folders (`/tmp`, `/run`, `/dev`, `/dev/shm`) is removed.
 * - A timeout or an abort kills the whole sandbox, like a one-off sandbox.
 * - The server is the sandbox's pid 1, which no command can signal, and makes itself non-dumpable
 *   before it starts any command, so a command (same uid, no capabilities) can neither ptrace it
 *   nor write its memory through `/proc/<pid>/mem` to outlive its call.
 * - Each command's environment is sent with it; the server's own is empty but for `PATH`.
 * - The sandbox's seccomp filter (`seccomp.ts`) applies to the server, bubblewrap's command, and
 *   so to every command it forks: seccomp filters are inherited and cannot be removed.
 *
 * Left alone on purpose: System V IPC objects and POSIX message queues made by a command live as
 * long as the warm sandbox (its IPC namespace); they hold nothing of the host.
 */

/** How long the server has to start before the wrapper gives up on warm sandboxes. */
const START_TIMEOUT_MS = 5_000;
/** How long the server has to kill what a command left and clean up after it. */
const REAP_TIMEOUT_MS = 5_000;

/** What a warm sandbox is built from: the sandbox part of a one-off sandbox's argv. */
export interface WarmSandboxSpec {
  /** The bubblewrap binary. */
  file: string;
  /** Everything before `--setenv`/`--chdir`/`--`: the namespaces and mounts. */
  sandboxArgs: readonly string[];
  /** What bubblewrap reads from fds 3, 4, ... (its seccomp filter), as `CommandInvocation.inputs`. */
  inputs: readonly Uint8Array[];
  /** The protected paths the sandbox mounts over, whose placeholders it keeps while it runs. */
  protectedPaths: readonly ProtectedPath[];
  /** The sandbox's own private folders, emptied of what each command left. */
  cleanFolders: readonly string[];
  /** How long the placeholders stay after the sandbox stops. */
  placeholderIdleMs: number;
}

/** One command for a warm sandbox. */
export interface WarmCommand {
  cwd: string;
  command: string;
  /** The command's whole environment. */
  env: Readonly<Record<string, string>>;
}

type SandboxState = "starting" | "idle" | "busy" | "dead";

/** A line from the server, or its end. */
type ServerEvent = { kind: "line"; line: string } | { kind: "gone" };

export class WarmSandbox {
  #state: SandboxState = "starting";
  #child: ChildProcess | undefined;
  #lease: PlaceholderLease | undefined;
  #control: string | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #listener: ((event: ServerEvent) => void) | undefined;
  #pending = "";
  #retired = false;
  #gone: Promise<void> = Promise.resolve();
  /** Settles once the server is ready (true) or failed to start (false). */
  readonly ready: Promise<boolean>;

  constructor(
    readonly spec: WarmSandboxSpec,
    readonly idleMs: number,
    private readonly onGone: (sandbox: WarmSandbox, startFailed: boolean) => void,
  ) {
    this.ready = this.#start().catch(() => {
      void this.destroy(true);
      return false;
    });
  }

  /** Stop using it: destroyed now if no command runs in it, else once its command is done. */
  retire(): Promise<void> {
    if (this.#state === "busy") {
      this.#retired = true;
      return Promise.resolve();
    }
    return this.destroy();
  }

  get idle(): boolean {
    return this.#state === "idle";
  }

  get alive(): boolean {
    return this.#state !== "dead";
  }

  async #start(): Promise<boolean> {
    this.#lease = acquirePlaceholders(this.spec.protectedPaths, {
      idleMs: this.spec.placeholderIdleMs,
    });
    this.#control = await createControlFolder();
    const control = this.#control;
    if (this.#state === "dead") return false;
    // The server's status pipe follows bubblewrap's inputs (which bubblewrap closes once read).
    const statusFd = 3 + this.spec.inputs.length;
    const child = spawn(
      this.spec.file,
      [
        ...this.spec.sandboxArgs,
        ...warmServerArguments({ control, statusFd, cleanFolders: this.spec.cleanFolders }),
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
    status?.setEncoding("utf8");
    status?.on("data", (text: string) => {
      this.#pending += text;
      let newline = this.#pending.indexOf("\n");
      while (newline >= 0) {
        const line = this.#pending.slice(0, newline);
        this.#pending = this.#pending.slice(newline + 1);
        this.#listener?.({ kind: "line", line });
        newline = this.#pending.indexOf("\n");
      }
    });
    const gone = () => {
      const wasStarting = this.#state === "starting";
      this.#listener?.({ kind: "gone" });
      void this.destroy(wasStarting);
    };
    child.once("exit", gone);
    child.once("error", gone);
    status?.once("close", gone);

    const started = await this.#next(START_TIMEOUT_MS);
    if (started?.kind !== "line" || started.line !== "ready") throw new Error("did not start");
    if (this.#state !== "starting") return false;
    this.#state = "idle";
    this.#armIdleTimer();
    return true;
  }

  /** The next line from the server, `gone`, or `undefined` after `timeoutMs`. */
  #next(timeoutMs: number): Promise<ServerEvent | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#listener = undefined;
        resolve(undefined);
      }, timeoutMs);
      this.#listener = (event) => {
        clearTimeout(timer);
        this.#listener = undefined;
        resolve(event);
      };
    });
  }

  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => void this.destroy(false), this.idleMs);
    this.#idleTimer.unref();
  }

  /**
   * Kill the sandbox and everything in it, and let go of its placeholders and folder; settles
   * once bubblewrap is gone and they are let go.
   */
  destroy(startFailed = false): Promise<void> {
    if (this.#state === "dead") return this.#gone;
    this.#state = "dead";
    clearTimeout(this.#idleTimer);
    const child = this.#child;
    if (child?.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    const lease = this.#lease;
    const control = this.#control;
    // The placeholders stay until bubblewrap is gone: removing a mount point detaches the mount.
    const cleanUp = async () => {
      await lease?.release();
      if (control === undefined) return;
      await removeControlFolder(control);
    };
    const running = child !== undefined && child.exitCode === null && child.signalCode === null;
    // Held until it is gone, so that a caller awaiting this keeps the process alive meanwhile.
    if (running) child.ref();
    this.#gone = running
      ? new Promise<void>((resolve) => child.once("exit", () => resolve())).then(cleanUp)
      : cleanUp();
    this.onGone(this, startFailed);
    return this.#gone;
  }

  /**
   * Run `command` if the sandbox is idle, settling like `runProcess`; `undefined` when it is not
   * (busy, starting or gone): run the command some other way.
   */
  run(command: WarmCommand, options: WarmRunOptions): Promise<ExecResult> | undefined {
    if (this.#state !== "idle" || this.#control === undefined || this.#child?.stdin == null) {
      return undefined;
    }
    for (const text of [command.cwd, command.command, ...Object.entries(command.env).flat()]) {
      // A NUL cannot cross `exec`; the one-off path reports it as it always has.
      if (text.includes("\0")) return undefined;
    }
    // The server runs `bash -c <command>`: a command too long for an argument runs one-off, where
    // the shell reads it from a descriptor (`shellCommand`).
    if (!fitsInArgument(command.command)) return undefined;
    this.#state = "busy";
    clearTimeout(this.#idleTimer);
    return this.#run(command, options, this.#control, this.#child.stdin);
  }

  async #run(
    { cwd, command, env }: WarmCommand,
    {
      timeoutMs,
      abortSignal,
      maxOutputBytes,
      killGraceMs = 1000,
      drainMs = 250,
      onOutput,
    }: WarmRunOptions,
    control: string,
    input: NodeJS.WritableStream,
  ): Promise<ExecResult> {
    const started = performance.now();
    const output = new CommandOutput(maxOutputBytes, onOutput);
    const sinks = [output.onStdout, output.onStderr];
    const readers: net.Socket[] = [];
    const placeholders: number[] = [];
    let openReaders = 0;
    let onReadersClosed: (() => void) | undefined;
    try {
      ["out", "err"].forEach((name, index) => {
        const fifo = path.join(control, name);
        const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
        // Our own writer keeps the reader from ending before the command has opened its end.
        placeholders.push(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        const sink = sinks[index] as (chunk: Buffer) => void;
        const reader = new net.Socket({ fd: readFd, readable: true, writable: false });
        reader.on("data", sink);
        openReaders += 1;
        let ended = false;
        const onEnded = () => {
          if (ended) return;
          ended = true;
          openReaders -= 1;
          if (openReaders === 0) onReadersClosed?.();
        };
        reader.once("end", onEnded);
        reader.once("close", onEnded);
        reader.on("error", () => {
          // What was read before the error is kept.
        });
        readers.push(reader);
      });
    } catch (error) {
      for (const fd of placeholders) closeSync(fd);
      for (const reader of readers) reader.destroy();
      void this.destroy();
      throw new ToolError("INTERNAL", `the warm sandbox's output could not be opened: ${error}`, {
        cause: error,
      });
    }
    const closePlaceholders = () => {
      for (const fd of placeholders.splice(0)) closeSync(fd);
    };

    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killAll = () => {
      const pid = this.#child?.pid;
      if (pid === undefined) return;
      try {
        process.kill(-pid, "SIGTERM");
      } catch {
        // Gone already.
      }
      killTimer = setTimeout(() => void this.destroy(), killGraceMs);
    };
    const timeout = setTimeout(() => {
      timedOut = true;
      killAll();
    }, timeoutMs);
    const onAbort = () => {
      aborted = true;
      killAll();
    };
    abortSignal?.addEventListener("abort", onAbort, { once: true });

    const exited = this.#next(2_147_483_647);
    input.write(runRequest(cwd, command, env));
    const event = await exited;

    let exitCode: number | null = null;
    let signal: NodeJS.Signals | undefined;
    const exitedNormally = event?.kind === "line" && event.line.startsWith("exit ");
    if (exitedNormally) {
      exitCode = exitCodeOf(event.line);
    } else {
      // The sandbox died under the command: a timeout, an abort, or the command killed it.
      signal = (this.#child?.signalCode as NodeJS.Signals | null) ?? "SIGKILL";
    }
    // The command's output ends when all it started have closed it, or after the drain time.
    closePlaceholders();
    if (openReaders > 0) {
      await new Promise<void>((resolve) => {
        const drain = setTimeout(resolve, drainMs);
        onReadersClosed = () => {
          clearTimeout(drain);
          resolve();
        };
      });
    }
    let reaped = false;
    if (exitedNormally && this.#state === "busy") {
      const done = this.#next(REAP_TIMEOUT_MS);
      input.write(REAP_REQUEST);
      const answer = await done;
      reaped = answer?.kind === "line" && answer.line === "reaped";
    }
    clearTimeout(timeout);
    clearTimeout(killTimer);
    abortSignal?.removeEventListener("abort", onAbort);
    if (timedOut || aborted) {
      // Killed from outside, as a one-off sandbox is: no exit code of the command's own.
      exitCode = null;
      signal = (this.#child?.signalCode as NodeJS.Signals | null) ?? "SIGTERM";
    }
    if (!reaped) void this.destroy();
    // Once reaped nobody else holds the FIFOs: what is left unread is the command's, past the drain.
    for (const reader of readers) reader.destroy();
    closePlaceholders();
    if (this.#state === "busy") {
      this.#state = "idle";
      if (this.#retired) void this.destroy();
      else this.#armIdleTimer();
    }
    if (aborted) throw new ToolError("ABORTED", "the command was aborted");
    return output.result({ exitCode, signal, started, timedOut });
  }
}
