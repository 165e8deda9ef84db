import type { ExecResult } from "@pleach/core/sandbox";
import type { LocalSandbox } from "../local-sandbox.js";
import type { ExecRequest } from "./protocol.js";

/** The bounds a server puts on the commands of its sandboxes. */
export interface StreamingExecLimits {
  /** The time limit of a command whose request names none. */
  defaultTimeoutMs: number;
  /** Longer time limits asked for are cut to this. */
  maxTimeoutMs: number;
  /** Bytes kept of each of stdout and stderr when the request names none, and the most it may ask. */
  maxOutputBytes: number;
}

/** Options of {@link execStreaming}. */
export interface ExecStreamingOptions {
  /** The sandbox's own client: its checks, its OS sandbox, its bounded result. */
  client: LocalSandbox;
  limits: StreamingExecLimits;
  /** The request as it came off the wire; the client checks every field of it. */
  request: ExecRequest;
  abortSignal: AbortSignal;
  /** Called with the text of each piece of output as it is read, up to the output bound a stream. */
  onOutput: (stream: "stdout" | "stderr", text: string) => void;
}

/**
 * Run a sandbox's command through its local client, with the server's limits applied, handing
 * each piece of output to `onOutput` as it comes: the result is exactly what the local client
 * returns, and the wire sees the output while the command runs.
 */
export function execStreaming({
  client,
  limits,
  request,
  abortSignal,
  onOutput,
}: ExecStreamingOptions): Promise<ExecResult> {
  const { command, cwd, env, stdin } = request;
  const timeoutMs = request.timeoutMs ?? limits.defaultTimeoutMs;
  const maxOutputBytes = request.maxOutputBytes ?? limits.maxOutputBytes;
  return client.exec(command, {
    cwd,
    env,
    stdin,
    abortSignal,
    onOutput,
    // Wrong types pass through untouched for the client to refuse with its own message.
    timeoutMs: typeof timeoutMs === "number" ? Math.min(timeoutMs, limits.maxTimeoutMs) : timeoutMs,
    maxOutputBytes:
      typeof maxOutputBytes === "number"
        ? Math.min(maxOutputBytes, limits.maxOutputBytes)
        : maxOutputBytes,
  });
}
