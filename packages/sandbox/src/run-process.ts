import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import { ToolError } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";
import { CommandOutput } from "./bounded-output.js";
import type { WrappedCommand } from "./os/wrap-command.js";
import type { RunProcessOptions } from "./run-options.js";

export type { RunProcessOptions } from "./run-options.js";

import { feedInputs, inputPipes } from "./os/launcher-inputs.js";

/**
 * Run a launch in a new process group and settle with its {@link ExecResult}. A timeout or an
 * abort kills the whole group (TERM, then KILL); so does the command's own exit, so that nothing it
 * started outlives the call. Output is read through pipes and kept in bounded memory whatever the
 * command prints.
 */
export async function runProcess(
  invocation: WrappedCommand,
  {
    cwd,
    stdin,
    timeoutMs,
    abortSignal,
    maxOutputBytes,
    killGraceMs = 1000,
    drainMs = 250,
    onOutput,
  }: RunProcessOptions,
): Promise<ExecResult> {
  if (abortSignal?.aborted) {
    throw new ToolError("ABORTED", "the command was aborted before it started");
  }
  const output = new CommandOutput(maxOutputBytes, onOutput);

  return new Promise<ExecResult>((resolve, reject) => {
    const started = performance.now();
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const timers: NodeJS.Timeout[] = [];

    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(invocation.file, invocation.args, {
        cwd,
        env: invocation.env,
        detached: true,
        stdio: [
          stdin === undefined ? "ignore" : "pipe",
          "pipe",
          "pipe",
          // Bubblewrap's seccomp filter, read from fd 3.
          ...inputPipes(invocation.inputs),
        ],
      });
      feedInputs(child, invocation.inputs);
    } catch (error) {
      // The command's text is never in the argv past a limit (`shellCommand`); its variables are.
      reject(
        (error as NodeJS.ErrnoException).code === "E2BIG"
          ? new ToolError(
              "INVALID_INPUT",
              "the command's variables (env) are too long to start it; pass large data in a file instead",
              { cause: error },
            )
          : error,
      );
      return;
    }

    const readers = [child.stdout, child.stderr].filter((reader) => reader !== null);
    child.stdout?.on("data", output.onStdout);
    child.stderr?.on("data", output.onStderr);

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
    const stop = () => {
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      abortSignal?.removeEventListener("abort", onAbort);
      for (const reader of readers) reader.destroy();
    };

    const finish = () => {
      if (settled) return;
      stop();
      if (aborted) {
        reject(new ToolError("ABORTED", "the command was aborted"));
        return;
      }
      resolve(
        output.result({ exitCode: exit?.code ?? null, signal: exit?.signal, started, timedOut }),
      );
    };

    let openReaders = readers.length;
    for (const reader of readers) {
      let ended = false;
      const onEnded = () => {
        if (ended) return;
        ended = true;
        openReaders -= 1;
        if (openReaders === 0 && exit !== undefined) finish();
      };
      // EOF: the command and all it started closed the stream. A reset ends it too (only `close`).
      reader.once("end", onEnded);
      reader.once("close", onEnded);
      reader.on("error", () => {
        // What was read before the error is kept.
      });
    }
    child.stdin?.on("error", () => {
      // The command closed its stdin early (EPIPE); what it did not read is not an error.
    });
    if (stdin !== undefined) child.stdin?.end(stdin);

    child.on("error", (error: NodeJS.ErrnoException) => {
      if (settled) return;
      stop();
      // Node reports a folder to start in that is gone as the program missing (spawn ENOENT).
      const folderGone =
        (error.code === "ENOENT" || error.code === "ENOTDIR") &&
        statSync(cwd, { throwIfNoEntry: false })?.isDirectory() !== true;
      reject(
        folderGone
          ? new ToolError(
              "NOT_FOUND",
              `the folder to run in is gone or no longer a folder (it changed as the command started): ${cwd}`,
              { cause: error },
            )
          : new ToolError("INTERNAL", `could not start ${invocation.file}: ${error.message}`, {
              cause: error,
            }),
      );
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // Whatever the command left running in its group dies with it.
      killGroup("SIGKILL");
      if (openReaders === 0) finish();
      else timers.push(setTimeout(finish, drainMs));
    });

    timers.push(
      setTimeout(() => {
        timedOut = true;
        terminate();
      }, timeoutMs),
    );
    abortSignal?.addEventListener("abort", onAbort, { once: true });
  });
}
