import { spawn } from "node:child_process";
import type { ExecResult } from "@pleach/coding-agent/sandbox";
import { ToolError } from "@pleach/core";
import { BoundedOutput } from "./bounded-output.js";
import type { CommandInvocation } from "./os/index.js";

/** Options of {@link runProcess}. */
export interface RunProcessOptions {
  /** Real path of the folder to run in. */
  cwd: string;
  stdin?: string;
  timeoutMs: number;
  abortSignal?: AbortSignal;
  /** Bytes kept of each of stdout and stderr. */
  maxOutputBytes: number;
  /**
   * After TERM, how long the process group has before KILL.
   * @default 1000
   */
  killGraceMs?: number;
  /**
   * After the command exits, how long to wait for its pipes to close (a background child may
   * hold them) before returning anyway.
   * @default 250
   */
  drainMs?: number;
}

/**
 * Run an invocation in a new process group and settle with its {@link ExecResult}. A timeout or an
 * abort kills the whole group (TERM, then KILL); so does the command's own exit, so that nothing it
 * started outlives the call. Output is kept in bounded memory whatever the command prints.
 */
export function runProcess(
  invocation: CommandInvocation,
  {
    cwd,
    stdin,
    timeoutMs,
    abortSignal,
    maxOutputBytes,
    killGraceMs = 1000,
    drainMs = 250,
  }: RunProcessOptions,
): Promise<ExecResult> {
  if (abortSignal?.aborted) {
    return Promise.reject(new ToolError("ABORTED", "the command was aborted before it started"));
  }
  return new Promise<ExecResult>((resolve, reject) => {
    const started = performance.now();
    const stdout = new BoundedOutput(maxOutputBytes);
    const stderr = new BoundedOutput(maxOutputBytes);
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const timers: NodeJS.Timeout[] = [];

    const child = spawn(invocation.file, invocation.args, {
      cwd,
      env: invocation.env,
      detached: true,
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });

    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is already gone.
      }
    };
    const terminate = () => {
      killGroup("SIGTERM");
      timers.push(setTimeout(() => killGroup("SIGKILL"), killGraceMs));
    };
    const onAbort = () => {
      aborted = true;
      terminate();
    };

    const finish = () => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      abortSignal?.removeEventListener("abort", onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      if (aborted) {
        reject(new ToolError("ABORTED", "the command was aborted"));
        return;
      }
      const result: ExecResult = {
        exitCode: exit?.code ?? null,
        stdout: stdout.text("stdout"),
        stderr: stderr.text("stderr"),
        durationMs: Math.round(performance.now() - started),
        timedOut,
        truncated: stdout.truncated || stderr.truncated,
      };
      if (exit?.signal) result.signal = exit.signal;
      resolve(result);
    };

    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.stdin?.on("error", () => {
      // The command closed its stdin early (EPIPE); what it did not read is not an error.
    });
    if (stdin !== undefined) child.stdin?.end(stdin);

    child.on("error", (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      abortSignal?.removeEventListener("abort", onAbort);
      reject(
        new ToolError("INTERNAL", `could not start ${invocation.file}: ${error.message}`, {
          cause: error,
        }),
      );
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // Whatever the command left running in its group dies with it.
      killGroup("SIGKILL");
      timers.push(setTimeout(finish, drainMs));
    });
    child.on("close", finish);

    timers.push(
      setTimeout(() => {
        timedOut = true;
        terminate();
      }, timeoutMs),
    );
    abortSignal?.addEventListener("abort", onAbort, { once: true });
  });
}
