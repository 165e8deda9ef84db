import http from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { ToolError } from "@pleach/core";

/** Options of {@link createConnectionLimits}: every limit of an HTTP server's connections. */
export interface ConnectionLimitsOptions {
  /**
   * The most connections open at once, authorised or not (streams included). One
   * more is answered `503` with `Retry-After: 1` and closed, before a byte of it is read.
   * @default 512
   */
  maxConnections?: number;
  /**
   * The most open connections that have not made an authorised request yet (a request that passed
   * the Host/Origin check and carried the token). Past it, the oldest of them is answered `408`
   * and closed, as soon as it has had 250 ms to send its request (a burst of clients connecting
   * at once is not shed before the server has read their requests): connections that only
   * connect, or send headers slowly, cannot fill the server. Must be below `maxConnections`.
   * @default 64
   */
  maxUnauthorizedConnections?: number;
  /**
   * How long a connection may stay open without making an authorised request; then it is answered
   * `408` (or, in the middle of an answer, cut) and closed.
   * @default 10_000
   */
  unauthorizedTimeoutMs?: number;
  /**
   * How long the headers of each request may take to arrive, from the connection's first byte or
   * the request's (Node's `headersTimeout`); then `408` and closed.
   * @default 10_000
   */
  headersTimeoutMs?: number;
  /**
   * How long a whole request, body included, may take to arrive (Node's `requestTimeout`); then
   * `408` and closed. It bounds receiving only: an answer (an exec stream, an MCP event stream)
   * runs as long as it runs.
   * @default 300_000
   */
  requestTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection is kept open between requests (Node's
   * `keepAliveTimeout`).
   * @default 65_000
   */
  keepAliveTimeoutMs?: number;
  /**
   * The JSON body of an answer of these limits (`400`, `408`, `431` or `503`).
   * @default the sandbox protocol's `{ "error": { "code", "message", "details"? } }`: `TIMEOUT` for
   * 408 and `INTERNAL` for 503, with `details.unavailable: true` and `details.reason`;
   * `INVALID_INPUT` for 400 and 431
   */
  answer?: (refusal: ConnectionRefusal) => string;
}

/** Why the limits closed a connection. */
export interface ConnectionRefusal {
  status: 400 | 408 | 431 | 503;
  /**
   * `"connections"`: past `maxConnections`; `"unauthorized-limit"`: the oldest of more than
   * `maxUnauthorizedConnections`; `"unauthorized-timeout"`: no authorised request in time;
   * `"request-timeout"`: a request's headers or body did not arrive in time (`headersTimeoutMs`,
   * `requestTimeoutMs`); `"malformed"`: Node's HTTP parser refused the request (400, or 431 for
   * headers too large).
   */
  reason:
    | "connections"
    | "unauthorized-limit"
    | "unauthorized-timeout"
    | "request-timeout"
    | "malformed";
  /** One sentence for a person. */
  message: string;
}

/** The connection limits of one HTTP server (see {@link createConnectionLimits}). */
export interface ConnectionLimits {
  /** Give these to `http.createServer` (header, request and keep-alive timeouts). */
  readonly serverOptions: Readonly<
    Pick<
      http.ServerOptions,
      "headersTimeout" | "requestTimeout" | "keepAliveTimeout" | "connectionsCheckingInterval"
    >
  >;
  /**
   * Count and watch the connections of `server`, and answer the requests its parser refuses or
   * that arrive too slowly (400, 431, 408, in the body of `answer`); call it before the server
   * listens, once.
   */
  attach(server: http.Server): void;
  /**
   * Call when a request on `socket` is authorised (or a connection is upgraded after its checks):
   * the connection is no longer bound by the limits on unauthorised connections. `false` when the
   * limits closed that connection already: drop the request without answering.
   */
  authorized(socket: Duplex): boolean;
  /** Connections open now. */
  readonly connections: number;
  /** Of them, those without an authorised request yet. */
  readonly unauthorizedConnections: number;
  /** Stop watching (the server closes its connections itself). */
  close(): void;
}

interface Waiting {
  since: number;
  /** A request of it is being answered (a 401, say): it is cut rather than answered 408. */
  answering: boolean;
}

/**
 * How long a new connection has to make its request before it may be shed for the count: the
 * server accepts a burst of connections before it reads the first request of any of them.
 */
const SHED_GRACE_MS = 250;
/** Refused connections (past `maxConnections`) that may linger while their 503 is read. */
const MAX_LINGERING_REFUSALS = 64;
const LINGER_MS = 1_000;

/**
 * Bound the connections of an HTTP server, so that clients that connect and send nothing, or send
 * headers slowly, can neither hold connections forever nor crowd out authorised clients: header
 * and request timeouts, a limit on open connections (then `503` with `Retry-After`) and on
 * connections without an authorised request (the oldest over the limit once 250 ms old, and any
 * older than `unauthorizedTimeoutMs`, get `408` and are closed), and the same JSON answer to a
 * request that is malformed or too slow to arrive. Used by `createSandboxServer` and
 * `pleach mcp --http`:
 *
 * ```ts
 * const limits = createConnectionLimits();
 * const server = http.createServer(limits.serverOptions, (request, response) => {
 *   if (!checked(request)) return refuse(response); // Host/Origin and token
 *   if (!limits.authorized(request.socket)) return;
 *   // ...
 * });
 * limits.attach(server);
 * ```
 */
export function createConnectionLimits({
  maxConnections = 512,
  maxUnauthorizedConnections = 64,
  unauthorizedTimeoutMs = 10_000,
  headersTimeoutMs = 10_000,
  requestTimeoutMs = 300_000,
  keepAliveTimeoutMs = 65_000,
  answer = sandboxAnswer,
}: ConnectionLimitsOptions = {}): ConnectionLimits {
  const whole = (name: string, value: number) => {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new ToolError("INVALID_INPUT", `${name} must be a positive whole number, got ${value}`);
    }
  };
  whole("maxConnections", maxConnections);
  whole("maxUnauthorizedConnections", maxUnauthorizedConnections);
  whole("unauthorizedTimeoutMs", unauthorizedTimeoutMs);
  whole("headersTimeoutMs", headersTimeoutMs);
  whole("requestTimeoutMs", requestTimeoutMs);
  whole("keepAliveTimeoutMs", keepAliveTimeoutMs);
  if (maxUnauthorizedConnections >= maxConnections) {
    throw new ToolError(
      "INVALID_INPUT",
      `maxUnauthorizedConnections (${maxUnauthorizedConnections}) must be below maxConnections (${maxConnections}), so that authorised clients always find room`,
    );
  }
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ToolError(
      "INVALID_INPUT",
      `headersTimeoutMs (${headersTimeoutMs}) must not be above requestTimeoutMs (${requestTimeoutMs})`,
    );
  }

  let open = 0;
  let lingering = 0;
  /** Connections without an authorised request, oldest first (a Map keeps insertion order). */
  const waiting = new Map<Duplex, Waiting>();
  /** Connections these limits closed: a request still parsed from one is dropped. */
  const closedByUs = new WeakSet<Duplex>();
  let sweeper: NodeJS.Timeout | undefined;
  let shedLater: NodeJS.Timeout | undefined;
  let attached = false;

  const raw = (refusal: ConnectionRefusal): string => {
    const body = answer(refusal);
    return (
      `HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status]}\r\n` +
      "connection: close\r\n" +
      (refusal.status === 503 ? "retry-after: 1\r\n" : "") +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `cache-control: no-store\r\n\r\n${body}`
    );
  };

  /**
   * Answer a request Node's parser refused (a malformed header, a `Content-Length` that is no
   * number, headers too large) or whose headers or body did not arrive in time, and close it: it
   * never reaches the request handler.
   */
  const refuseRequest = (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const refusal: ConnectionRefusal =
      error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? {
            status: 408,
            reason: "request-timeout",
            message: `the request did not arrive in time (headers within ${headersTimeoutMs} ms, the whole request within ${requestTimeoutMs} ms); nothing was done`,
          }
        : {
            status: error.code === "HPE_HEADER_OVERFLOW" ? 431 : 400,
            reason: "malformed",
            message: `malformed HTTP request (${error.code ?? error.message}); nothing was done`,
          };
    socket.end(raw(refusal));
    lingerAtMost(socket);
  };

  /** Answer 408 on a connection without an authorised request (cut it mid-answer) and close it. */
  const expire = (socket: Duplex, entry: Waiting, reason: ConnectionRefusal["reason"]) => {
    waiting.delete(socket);
    closedByUs.add(socket);
    if (entry.answering || !socket.writable) {
      socket.destroy();
      return;
    }
    const message =
      reason === "unauthorized-timeout"
        ? `this connection made no authorised request within ${unauthorizedTimeoutMs} ms; it is closed`
        : `this server already holds its limit of ${maxUnauthorizedConnections} connections without an authorised request; the oldest is closed`;
    socket.end(raw({ status: 408, reason, message }), () => socket.destroy());
    lingerAtMost(socket);
  };

  /** Close the oldest waiting connections past the count, once they have had their grace. */
  const shed = () => {
    const now = Date.now();
    for (const [socket, entry] of waiting) {
      if (waiting.size <= maxUnauthorizedConnections) return;
      const waited = now - entry.since;
      if (waited < SHED_GRACE_MS) {
        // The oldest is young yet: look again when it is not.
        shedLater ??= setTimeout(() => {
          shedLater = undefined;
          shed();
        }, SHED_GRACE_MS - waited);
        shedLater.unref();
        return;
      }
      expire(socket, entry, "unauthorized-limit");
    }
  };

  const sweep = () => {
    const deadline = Date.now() - unauthorizedTimeoutMs;
    for (const [socket, entry] of waiting) {
      if (entry.since > deadline) break;
      expire(socket, entry, "unauthorized-timeout");
    }
  };

  /** Answer 503 on a connection past the limit, before Node's HTTP handling sees it. */
  const refuse = (socket: Socket) => {
    socket.on("error", () => {});
    if (lingering >= MAX_LINGERING_REFUSALS) {
      socket.destroy();
      return;
    }
    lingering += 1;
    socket.once("close", () => {
      lingering -= 1;
    });
    // What the client sends is read and dropped, so that closing does not reset the connection
    // before it has read the answer; it is closed when the client ends, or after a second.
    socket.resume();
    socket.once("end", () => socket.destroy());
    socket.end(
      raw({
        status: 503,
        reason: "connections",
        message: `this server already holds its limit of ${maxConnections} connections; try again in a moment or use another server`,
      }),
    );
    lingerAtMost(socket);
  };

  return {
    serverOptions: {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      // Node checks the two timeouts at this interval (30 s by default).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
    },
    attach(server) {
      if (attached) throw new Error("these connection limits are attached to a server already");
      if (server.listening) throw new Error("attach the connection limits before listening");
      attached = true;
      // Node's own connection handling (the HTTP parser) runs after the count, and never for a
      // connection refused here: no request of it can be parsed, let alone served.
      const handlers = server.listeners("connection") as Array<(socket: Socket) => void>;
      server.removeAllListeners("connection");
      server.on("connection", (socket: Socket) => {
        if (open >= maxConnections) {
          refuse(socket);
          return;
        }
        open += 1;
        const entry: Waiting = { since: Date.now(), answering: false };
        waiting.set(socket, entry);
        socket.once("close", () => {
          open -= 1;
          waiting.delete(socket);
        });
        for (const handler of handlers) handler.call(server, socket);
        shed();
      });
      server.prependListener("request", (request, response) => {
        const entry = waiting.get(request.socket);
        if (entry === undefined) return;
        entry.answering = true;
        response.once("close", () => {
          entry.answering = false;
        });
      });
      server.on("clientError", refuseRequest);
      sweeper = setInterval(sweep, Math.max(50, Math.min(1_000, unauthorizedTimeoutMs / 4)));
      sweeper.unref();
      server.once("close", () => {
        clearInterval(sweeper);
        clearTimeout(shedLater);
      });
    },
    authorized(socket) {
      if (closedByUs.has(socket)) return false;
      waiting.delete(socket);
      return true;
    },
    get connections() {
      return open;
    },
    get unauthorizedConnections() {
      return waiting.size;
    },
    close() {
      clearInterval(sweeper);
      clearTimeout(shedLater);
    },
  };
}

/** Destroy `socket` after {@link LINGER_MS} if it is still open (its peer reads nothing). */
function lingerAtMost(socket: Duplex): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

/** The sandbox protocol's error body for a refusal of the connection limits. */
function sandboxAnswer({ status, reason, message }: ConnectionRefusal): string {
  if (reason === "malformed") return JSON.stringify({ error: { code: "INVALID_INPUT", message } });
  return JSON.stringify({
    error: {
      code: status === 503 ? "INTERNAL" : "TIMEOUT",
      message,
      details: { unavailable: true, reason },
    },
  });
}
