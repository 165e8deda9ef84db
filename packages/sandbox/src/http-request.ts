import http from "node:http";
import https from "node:https";
import { ToolError } from "@pleach/core";
import { sandboxUnavailableError } from "@pleach/core/sandbox";
import { type BodyReadError, readBody } from "./server/read-body.js";

/** Options of {@link createHttpRequester}. */
export interface HttpRequesterOptions {
  /** The server's base URL (http: or https:); with `socketPath`, only its path prefix is used. */
  base: URL;
  /** Reach the server through this Unix socket. */
  socketPath: string | undefined;
  /** Keep-alive connections kept. */
  maxSockets: number;
  /** How the server is named in errors (its origin, or `unix:PATH`). */
  where: string;
}

/** Options of one request (see {@link HttpRequester.send}). */
export interface HttpRequestOptions {
  method: string;
  /** The path under the base URL's path, with its query. */
  target: string;
  headers: Record<string, string>;
  /** The whole body, when there is one. */
  body?: Buffer;
  abortSignal?: AbortSignal;
  /** How long until the answer's head arrives. */
  timeoutMs: number;
}

/** Requests to one server, on kept connections. */
export interface HttpRequester {
  /** Send a request; resolves with the answer once its head has come (its body is unread). */
  send(options: HttpRequestOptions): Promise<http.IncomingMessage>;
  /**
   * Read an answer's body whole. Aborting, or passing `deadline` (a `performance.now()` time, the
   * one `timeoutMs` counted from), cuts it short.
   */
  readAll(
    response: http.IncomingMessage,
    options: { abortSignal?: AbortSignal; deadline?: number; timeoutMs?: number },
  ): Promise<Buffer>;
  /** Close the kept connections. */
  close(): void;
}

/**
 * Plain HTTP/1.1 requests to one sandbox server with Node's own client, on a keep-alive agent.
 * Failures are `ToolError`s: a server that cannot be reached, does not answer in time or breaks
 * off its answer gives a sandbox-unavailable error; an abort gives `ABORTED`. Redirects are not
 * followed (Node's client never does): a 3xx is an answer like any other.
 */
export function createHttpRequester({
  base,
  socketPath,
  maxSockets,
  where,
}: HttpRequesterOptions): HttpRequester {
  const transport = base.protocol === "https:" ? https : http;
  const prefix = base.pathname.replace(/\/$/, "");
  let agent: http.Agent | undefined;

  const timedOut = (timeoutMs: number, what: string) =>
    sandboxUnavailableError({
      message: `the sandbox server at ${where} did not ${what} within ${timeoutMs} ms; it may be overloaded or gone`,
      details: { reason: "timeout" },
    });

  return {
    async send({ method, target, headers, body, abortSignal, timeoutMs }) {
      if (abortSignal?.aborted) {
        throw new ToolError("ABORTED", "the call was aborted before it was sent");
      }
      const all = { ...headers };
      if (body !== undefined) all["content-length"] = String(body.length);
      // Idle kept sockets are dropped after 30 s, well before the server's 65 s: a request is
      // never sent on a socket the server is closing (an exec that met that could not be retried).
      // Every request is written whole, so Nagle's algorithm would only delay its last segment.
      agent ??= new transport.Agent({
        keepAlive: true,
        maxSockets,
        scheduling: "lifo",
        timeout: 30_000,
        noDelay: true,
      });
      const url = new URL(`${prefix}${target}`, base);
      return new Promise<http.IncomingMessage>((resolve, reject) => {
        const request = transport.request(url, {
          method,
          headers: all,
          agent,
          ...(socketPath === undefined ? {} : { socketPath }),
        });
        let settled = false;
        const fail = (error: Error) => {
          if (settled) return;
          settled = true;
          cleanup();
          request.destroy();
          reject(error);
        };
        const onAbort = () => fail(new ToolError("ABORTED", "the call was aborted"));
        const timer = setTimeout(() => fail(timedOut(timeoutMs, "answer")), timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          abortSignal?.removeEventListener("abort", onAbort);
        };
        abortSignal?.addEventListener("abort", onAbort, { once: true });
        request.on("error", (error) => fail(unreachable(where, error)));
        request.on("response", (response) => {
          if (settled) {
            response.destroy();
            return;
          }
          settled = true;
          cleanup();
          resolve(response);
        });
        request.end(body);
      });
    },

    async readAll(response, { abortSignal, deadline, timeoutMs }) {
      try {
        return await readBody(response, { abortSignal, deadline });
      } catch (error) {
        const { reason, cause } = error as BodyReadError;
        if (reason === "aborted") throw new ToolError("ABORTED", "the call was aborted");
        if (reason === "timeout") throw timedOut(timeoutMs ?? 0, "finish answering");
        if (cause instanceof Error) throw unreachable(where, cause);
        throw sandboxUnavailableError({
          message: `the sandbox server at ${where} broke off its answer`,
          details: { reason: "disconnected" },
        });
      }
    },

    close() {
      agent?.destroy();
      agent = undefined;
    },
  };
}

/** The sandbox-unavailable error of a server that could not be reached. */
function unreachable(where: string, error: Error): ToolError {
  const code = (error as NodeJS.ErrnoException).code;
  return sandboxUnavailableError({
    message: `could not reach the sandbox server at ${where} (${code ?? error.message}); it may be down: try again or use another server`,
    cause: error,
    details: { reason: "unreachable", errno: code },
  });
}
