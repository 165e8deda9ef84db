import { ToolError } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";
import { CommandOutput } from "../bounded-output.js";
import type { WarmRunOptions } from "../run-options.js";
import { fitsInArgument } from "./command-text.js";
import { exitCodeOf } from "./exit-status.js";
import type { SessionCommand } from "./session-processes.js";
import type { SessionSandbox } from "./session-sandbox.js";

/** Options of {@link runInSession}: a one-off run's, and what to keep of the output. */
export interface SessionRunOptions extends WarmRunOptions {
  stdin?: string;
  /** Copy the whole output to this file of the kept-output folder, up to `maxBytes`. */
  keep?: { name: string; maxBytes: number };
}

/** A foreground command's end in a session sandbox. */
export interface SessionRunResult {
  result: ExecResult;
  /** Bytes it printed, stdout and stderr together. */
  outputBytes: number;
  /** Whether its output was copied to the kept file. */
  kept: boolean;
}

/**
 * Run a foreground command in a session sandbox, settling as a one-off sandbox's run does: the
 * bounded output, the exit code (128 + the signal for one that killed it), a timeout or an abort
 * killing every process of it (TERM, then KILL after the grace time). Once it has exited and its
 * output has closed (or the drain time has passed), whatever it left running is killed; the
 * session's jobs and other commands run on. `undefined` when the sandbox cannot take it.
 */
export function runInSession(
  sandbox: SessionSandbox,
  { cwd, command, env }: SessionCommand,
  {
    timeoutMs,
    abortSignal,
    maxOutputBytes,
    killGraceMs = 1000,
    drainMs = 250,
    onOutput,
    stdin,
    keep,
  }: SessionRunOptions,
): Promise<SessionRunResult> | undefined {
  if (abortSignal?.aborted) {
    return Promise.reject(new ToolError("ABORTED", "the command was aborted before it started"));
  }
  const started = performance.now();
  const output = new CommandOutput(maxOutputBytes, onOutput);
  let outputBytes = 0;
  let kept = keep !== undefined;
  let status: number | undefined;
  let timedOut = false;
  let aborted = false;
  const timers: NodeJS.Timeout[] = [];
  let settle: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    settle = resolve;
  });

  const running = sandbox.spawn(
    { cwd, command, env, stdin: stdin !== undefined, pty: false, ...(keep ? { keep } : {}) },
    {
      onData(stream, data) {
        outputBytes += data.length;
        (stream === "stdout" ? output.onStdout : output.onStderr)(data);
      },
      onExit(exitStatus) {
        status = exitStatus;
      },
      onGone: () => settle(),
      onNoKeep() {
        kept = false;
      },
    },
    { drainMs },
  );
  if (running === undefined) return undefined;
  if (stdin !== undefined) {
    running.input(Buffer.from(stdin));
    running.endInput();
  }
  const kill = () => {
    running.signal("TERM");
    timers.push(setTimeout(() => running.reap(), killGraceMs));
  };
  timers.push(
    setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs),
  );
  const onAbort = () => {
    aborted = true;
    kill();
  };
  abortSignal?.addEventListener("abort", onAbort, { once: true });

  return done.then(() => {
    for (const timer of timers) clearTimeout(timer);
    abortSignal?.removeEventListener("abort", onAbort);
    if (aborted) throw new ToolError("ABORTED", "the command was aborted");
    let exitCode: number | null = null;
    let signal: NodeJS.Signals | undefined;
    if (timedOut || status === undefined) {
      // Killed from outside, or the sandbox died under it: no exit code of its own.
      signal = timedOut ? "SIGTERM" : "SIGKILL";
    } else {
      exitCode = exitCodeOf(`exit ${status}`);
    }
    return {
      result: output.result({ exitCode, signal, started, timedOut }),
      outputBytes,
      kept,
    };
  });
}

/**
 * Run a command in a warm sandbox (a session sandbox the wrapper keeps between the commands of a
 * burst): only when it is idle, then empty its private folders, so that the next command finds
 * them as a sandbox of its own would. `undefined` when it cannot take the command (busy, gone, a
 * command too long for an argument or with a NUL byte): run it one-off.
 */
export function runWarm(
  sandbox: SessionSandbox,
  command: SessionCommand,
  options: WarmRunOptions,
): Promise<ExecResult> | undefined {
  if (!sandbox.idle || !fitsInArgument(command.command)) return undefined;
  for (const text of [command.cwd, command.command, ...Object.entries(command.env).flat()]) {
    // A NUL cannot cross `exec`; the one-off path reports it as it always has.
    if (text.includes("\0")) return undefined;
  }
  const run = runInSession(sandbox, command, options);
  if (run === undefined) return undefined;
  return run.then(
    async ({ result }) => {
      await sandbox.clean();
      return result;
    },
    async (error: unknown) => {
      await sandbox.clean();
      throw error;
    },
  );
}
