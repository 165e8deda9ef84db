import type http from "node:http";
import type { ExecResult } from "@pleach/core/sandbox";
import type { LocalSandbox } from "../local-sandbox.js";
import type { StreamingExecLimits } from "./exec-limits.js";
import type { ExecEvent, ExecRequest } from "./protocol.js";
import type { HostedSandbox } from "./sandbox-registry.js";
import { toWireError } from "./wire-errors.js";

/**
 * Run a sandbox's command through its local client, with the server's limits applied, handing
 * each piece of output to `onOutput` as it comes: the result is exactly what the local client
 * returns, and the wire sees the output while the command runs.
 */
function execStreaming(
  client: LocalSandbox,
  limits: StreamingExecLimits,
  { command, cwd, env, stdin, timeoutMs, maxOutputBytes, fullOutputOverBytes }: ExecRequest,
  abortSignal: AbortSignal,
  onOutput: (stream: "stdout" | "stderr", text: string) => void,
): Promise<ExecResult> {
  return client.exec(command, {
    cwd,
    env,
    stdin,
    abortSignal,
    onOutput,
    fullOutputOverBytes,
    timeoutMs: Math.min(timeoutMs ?? limits.defaultTimeoutMs, limits.maxTimeoutMs),
    maxOutputBytes: Math.min(maxOutputBytes ?? limits.maxOutputBytes, limits.maxOutputBytes),
  });
}

/** Options of {@link serveExec}. */
export interface ServeExecOptions {
  sandbox: HostedSandbox;
  /** The request's body, checked. */
  body: ExecRequest;
  request: http.IncomingMessage;
  response: http.ServerResponse;
  /** How often a running command's stream carries a heartbeat line. */
  heartbeatMs: number;
}

/**
 * Answer an exec request with its NDJSON stream (see PROTOCOL.md): output events as they come, a
 * heartbeat every `heartbeatMs`, then `exit` or `error`. A client that goes away aborts the
 * command (its process group is killed). Resolves once the command is over and its sandbox let go.
 */
export async function serveExec({
  sandbox,
  body,
  request,
  response,
  heartbeatMs,
}: ServeExecOptions): Promise<void> {
  const controller = new AbortController();
  sandbox.running.add(controller);
  response.writeHead(200, {
    "content-type": "application/x-ndjson",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  response.flushHeaders();
  const send = (event: ExecEvent) => {
    if (!response.writableEnded && !response.destroyed)
      response.write(`${JSON.stringify(event)}\n`);
  };
  const onGone = () => {
    if (!response.writableFinished) controller.abort("the client went away");
  };
  response.on("close", onGone);
  request.socket.setNoDelay(true);
  const heartbeat = setInterval(() => send({ type: "heartbeat" }), heartbeatMs);
  try {
    const result = await execStreaming(
      sandbox.client,
      sandbox.limits,
      body,
      controller.signal,
      (stream, data) => send({ type: stream, data }),
    );
    send({ type: "exit", ...result });
  } catch (error) {
    const wire = toWireError(error);
    if (wire.code === "ABORTED" && typeof controller.signal.reason === "string") {
      wire.message = `${wire.message}: ${controller.signal.reason}`;
      wire.details = { ...wire.details, reason: controller.signal.reason };
    }
    send({ type: "error", error: wire });
  } finally {
    clearInterval(heartbeat);
    response.off("close", onGone);
    sandbox.running.delete(controller);
    sandbox.lastUsed = Date.now();
    response.end();
  }
}
