import { stat } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import type { ExecResult, SandboxMode } from "@pleach/coding-agent/sandbox";
import { ToolError } from "@pleach/core";
import type { CommandWrapper } from "../os/index.js";
import { type OutputChannel, sharedOutputChannel } from "../output-channel.js";
import { confinePath } from "../paths.js";
import { runProcess } from "../run-process.js";
import type { ExecRequest } from "./protocol.js";

/** Where a sandbox's commands run and what bounds them. */
export interface StreamingExecSettings {
  /** Real path of the workspace root. */
  root: string;
  mode: SandboxMode;
  network: boolean;
  commandWrapper: CommandWrapper;
  defaultTimeoutMs: number;
  /** Longer timeouts asked for are cut to this. */
  maxTimeoutMs: number;
  /** Bytes kept of each of stdout and stderr when the call gives none, and the most it may ask. */
  maxOutputBytes: number;
}

/** Options of {@link execStreaming}. */
export interface ExecStreamingOptions {
  settings: StreamingExecSettings;
  /** The request as it came off the wire: checked here, field by field. */
  request: ExecRequest;
  abortSignal: AbortSignal;
  /** Called with the text of each chunk of output as it comes, up to `maxOutputBytes` a stream. */
  onOutput: (stream: "stdout" | "stderr", text: string) => void;
}

/**
 * Run a command of a sandbox the way `LocalSandbox.exec` does (same checks, same OS sandbox, same
 * bounded result), and hand each chunk of its output to `onOutput` as it is read. The chunks are
 * taken from the output channel runProcess reads through, so the result is exactly the local one.
 * When the channel cannot work on this host (runProcess falls back to pipes), nothing streams and
 * the whole output arrives with the exit.
 */
export async function execStreaming({
  settings,
  request,
  abortSignal,
  onOutput,
}: ExecStreamingOptions): Promise<ExecResult> {
  const { command, cwd = "", env = {}, stdin } = request;
  if (typeof command !== "string" || command.trim() === "") {
    throw new ToolError("INVALID_INPUT", "exec needs a non-empty command string");
  }
  if (command.includes("\0"))
    throw new ToolError("INVALID_INPUT", "the command contains a NUL byte");
  const timeoutMs = request.timeoutMs ?? settings.defaultTimeoutMs;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ToolError("INVALID_INPUT", `timeoutMs must be a positive number, got ${timeoutMs}`);
  }
  const maxOutputBytes = request.maxOutputBytes ?? settings.maxOutputBytes;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 2) {
    throw new ToolError(
      "INVALID_INPUT",
      `maxOutputBytes must be an integer >= 2, got ${maxOutputBytes}`,
    );
  }
  if (stdin !== undefined && typeof stdin !== "string") {
    throw new ToolError("INVALID_INPUT", "stdin must be a string");
  }
  checkEnvironment(env);
  const directory = await confinePath(settings.root, settings.root, cwd);
  if (!directory.exists) throw new ToolError("NOT_FOUND", `no such folder: ${cwd}`);
  if (!(await stat(directory.real)).isDirectory()) {
    throw new ToolError("NOT_A_DIRECTORY", `cwd is not a folder: ${cwd}`);
  }
  const keptBytes = Math.min(maxOutputBytes, settings.maxOutputBytes);
  const invocation = await settings.commandWrapper.invocation({
    command,
    root: settings.root,
    cwd: directory.real,
    mode: settings.mode,
    env,
    network: settings.network,
  });
  try {
    return await runProcess(invocation, {
      cwd: directory.real,
      stdin,
      timeoutMs: Math.min(timeoutMs, settings.maxTimeoutMs),
      abortSignal,
      maxOutputBytes: keptBytes,
      outputChannel: teeChannel(sharedOutputChannel(), [
        streamTo("stdout", keptBytes, onOutput),
        streamTo("stderr", keptBytes, onOutput),
      ]),
    });
  } finally {
    await invocation.release?.();
  }
}

/** A sink that decodes a stream's chunks to text and passes on at most `budget` bytes of them. */
function streamTo(
  stream: "stdout" | "stderr",
  budget: number,
  onOutput: ExecStreamingOptions["onOutput"],
): (chunk: Buffer) => void {
  const decoder = new StringDecoder("utf8");
  let left = budget;
  return (chunk) => {
    if (left <= 0) return;
    const taken = chunk.length <= left ? chunk : chunk.subarray(0, left);
    left -= taken.length;
    // The chunk is a view of a reused read buffer: decoding copies it out.
    const text = decoder.write(taken);
    if (text !== "") onOutput(stream, text);
  };
}

/**
 * The channel runProcess reads through, with each stream's chunks also handed to a sink. runProcess
 * opens stdout first, then stderr: the n-th `open` gets the n-th sink.
 */
function teeChannel(
  base: OutputChannel,
  sinks: ReadonlyArray<(chunk: Buffer) => void>,
): OutputChannel {
  let opened = 0;
  return {
    get directory() {
      return base.directory;
    },
    open(onData) {
      const sink = sinks[opened];
      opened += 1;
      if (sink === undefined) return base.open(onData);
      return base.open((chunk) => {
        onData(chunk);
        sink(chunk);
      });
    },
    // The base channel is shared by the process: it outlives this command.
    close: async () => {},
  };
}

function checkEnvironment(env: unknown): asserts env is Record<string, string> {
  if (typeof env !== "object" || env === null || Array.isArray(env)) {
    throw new ToolError("INVALID_INPUT", "env must be an object of strings");
  }
  for (const [key, value] of Object.entries(env)) {
    if (
      typeof value !== "string" ||
      key === "" ||
      key.includes("=") ||
      `${key}${value}`.includes("\0")
    ) {
      throw new ToolError(
        "INVALID_INPUT",
        `env entry ${JSON.stringify(key)} must be a string without NUL bytes`,
      );
    }
  }
}
