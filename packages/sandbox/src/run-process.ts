import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import type { Readable } from "node:stream";
import { ToolError } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";
import { CommandOutput } from "./bounded-output.js";
import type { CommandInvocation } from "./os/index.js";
import { feedInputs, inputPipes } from "./os/launcher-inputs.js";
import { type OutputChannel, type OutputStream, sharedOutputChannel } from "./output-channel.js";

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
   * After the command exits, how long to wait for its output to close (a background child may
   * hold it) before returning anyway.
   * @default 250
   */
  drainMs?: number;
  /**
   * Where stdout and stderr are read (through one reused buffer). When it
   * cannot open both, plain pipes are used.
   * @default sharedOutputChannel()
   */
  outputChannel?: OutputChannel;
  /**
   * Called with each piece of output as it is read, decoded as UTF-8 (a character split across
   * reads is held back until it is whole), up to `maxOutputBytes` per stream; for streaming a
   * command's output to a remote caller while it runs.
   */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

/**
 * Run an invocation in a new process group and settle with its {@link ExecResult}. A timeout or an
 * abort kills the whole group (TERM, then KILL); so does the command's own exit, so that nothing it
 * started outlives the call. Output is kept in bounded memory whatever the command prints, read
 * through the output channel's reused buffer so that a flood of output leaves no garbage behind.
 */
export async function runProcess(
  invocation: CommandInvocation,
  {
    cwd,
    stdin,
    timeoutMs,
    abortSignal,
    maxOutputBytes,
    killGraceMs = 1000,
    drainMs = 250,
    outputChannel = sharedOutputChannel(),
    onOutput,
  }: RunProcessOptions,
): Promise<ExecResult> {
  if (abortSignal?.aborted) {
    throw new ToolError("ABORTED", "the command was aborted before it started");
  }
  if (stdin === undefined && invocation.warm !== undefined) {
    const warm = invocation.warm.run({
      timeoutMs,
      maxOutputBytes,
      killGraceMs,
      drainMs,
      ...(abortSignal === undefined ? {} : { abortSignal }),
      ...(onOutput === undefined ? {} : { onOutput }),
    });
    if (warm !== undefined) return warm;
  }
  const output = new CommandOutput(maxOutputBytes, onOutput);
  const { onStdout, onStderr } = output;
  const streams = await openStreams(outputChannel, onStdout, onStderr);
  if (abortSignal?.aborted) {
    destroyStreams(streams);
    throw new ToolError("ABORTED", "the command was aborted before it started");
  }

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
          streams?.[0].writer ?? "pipe",
          streams?.[1].writer ?? "pipe",
          // Bubblewrap's seccomp filter, read from fd 3.
          ...inputPipes(invocation.inputs),
        ],
      });
      feedInputs(child, invocation.inputs);
    } catch (error) {
      destroyStreams(streams);
      throw error;
    } finally {
      // The command holds its own copies now; ours would keep the readers from ending.
      for (const stream of streams ?? []) stream.writer.destroy();
    }

    let readers: Readable[];
    if (streams === undefined) {
      readers = [child.stdout, child.stderr].filter((reader) => reader !== null);
      child.stdout?.on("data", onStdout);
      child.stderr?.on("data", onStderr);
    } else {
      readers = streams.map((stream) => stream.reader);
    }

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

/** Both output streams from the channel, or `undefined` (use pipes) if either cannot be had. */
async function openStreams(
  channel: OutputChannel,
  onStdout: (chunk: Buffer) => void,
  onStderr: (chunk: Buffer) => void,
): Promise<[OutputStream, OutputStream] | undefined> {
  const [out, err] = await Promise.all([channel.open(onStdout), channel.open(onStderr)]);
  if (out !== undefined && err !== undefined) return [out, err];
  destroyStreams([out, err]);
  return undefined;
}

function destroyStreams(streams: ReadonlyArray<OutputStream | undefined> | undefined): void {
  for (const stream of streams ?? []) {
    stream?.reader.destroy();
    stream?.writer.destroy();
  }
}
