import type http from "node:http";
import { createInterface } from "node:readline";
import { ToolError } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";
import { sandboxUnavailableError } from "@pleach/core/sandbox";
import { execEventSchema } from "./server/protocol.js";
import { toolErrorOf } from "./server/wire-errors.js";

/** Options of {@link readExecStream}. */
export interface ReadExecStreamOptions {
  /** A 200 answer of `POST /v1/sandboxes/:id/exec`. */
  response: http.IncomingMessage;
  /** How the server is named in errors. */
  where: string;
  abortSignal: AbortSignal | undefined;
  /** Called with each chunk of output as the server streams it. */
  onOutput: ((stream: "stdout" | "stderr", text: string) => void) | undefined;
  /** How long the stream may stay silent before the server is taken for gone. */
  streamIdleTimeoutMs: number;
}

/**
 * Read an exec answer's NDJSON events, each line checked with `execEventSchema`, up to its `exit`
 * (the result) or `error` (thrown as its `ToolError`). A stream that ends first, stays silent too
 * long, or carries a line that is no event is the server's failure; aborting stops reading, and
 * the server kills the command when the connection closes.
 */
export function readExecStream({
  response,
  where,
  abortSignal,
  onOutput,
  streamIdleTimeoutMs,
}: ReadExecStreamOptions): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve, reject) => {
    let settled = false;
    const lines = createInterface({ input: response, crlfDelay: Number.POSITIVE_INFINITY });
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      abortSignal?.removeEventListener("abort", onAbort);
      lines.close();
      response.destroy();
      outcome();
    };
    const onAbort = () => settle(() => reject(new ToolError("ABORTED", "the command was aborted")));
    const onIdle = () =>
      settle(() =>
        reject(
          sandboxUnavailableError({
            message: `the sandbox server at ${where} sent nothing for ${streamIdleTimeoutMs} ms while running the command; it is taken for gone`,
            details: { reason: "timeout" },
          }),
        ),
      );
    let idle = setTimeout(onIdle, streamIdleTimeoutMs);
    abortSignal?.addEventListener("abort", onAbort, { once: true });
    if (abortSignal?.aborted) onAbort();

    const onLine = (line: string) => {
      if (settled || line === "") return;
      let event: ReturnType<typeof execEventSchema.parse>;
      try {
        event = execEventSchema.parse(JSON.parse(line));
      } catch (error) {
        settle(() =>
          reject(
            new ToolError(
              "INTERNAL",
              `the sandbox server at ${where} sent a line that is not an exec event`,
              { cause: error },
            ),
          ),
        );
        return;
      }
      switch (event.type) {
        case "stdout":
        case "stderr":
          onOutput?.(event.type, event.data);
          return;
        case "heartbeat":
          return;
        case "exit": {
          const { type: _type, ...result } = event;
          settle(() => resolve(result));
          return;
        }
        case "error":
          settle(() => reject(toolErrorOf(event.error)));
          return;
      }
    };
    // Any bytes, a heartbeat included, show the server is alive.
    response.on("data", () => {
      clearTimeout(idle);
      idle = setTimeout(onIdle, streamIdleTimeoutMs);
    });
    lines.on("line", onLine);
    const ended = () =>
      settle(() =>
        reject(
          sandboxUnavailableError({
            message: `the connection to the sandbox server at ${where} ended before the command did; the server may have stopped, and the command's outcome is unknown`,
            details: { reason: "disconnected" },
          }),
        ),
      );
    lines.on("close", ended);
    lines.on("error", ended);
    response.on("close", ended);
    response.on("error", ended);
  });
}
