import http from "node:http";
import https from "node:https";
import { ToolError, type ToolErrorCode } from "@pleach/core";
import type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  ReadFileOptions,
  SandboxClient,
  SandboxProvider,
  SandboxSession,
} from "@pleach/core/sandbox";
import { sandboxUnavailableError } from "@pleach/core/sandbox";
import { RawGetter } from "./raw-get.js";
import { readLimitOf } from "./read-limit.js";
import {
  type CreateSandboxResponse,
  type ExecEvent,
  FILE_CHANNEL_PROTOCOL,
  FILE_CHANNEL_ROUTE,
  PROTOCOL_PREFIX,
  type SandboxTemplate,
  WIRE_ERROR_CODES,
  type WireError,
} from "./server/protocol.js";
import { SpareBuffer } from "./spare-buffer.js";
import { decodeUtf8 } from "./utf8.js";

/** Headers to send with each request, such as `Authorization`. */
export type HttpSandboxAuth = () =>
  | Promise<{ headers: Record<string, string> }>
  | { headers: Record<string, string> };

/** Options of {@link createHttpStreamSandboxProvider}. */
export interface HttpStreamSandboxProviderOptions {
  /** The sandbox server, such as `http://10.0.0.7:8700/` (what `pleach sandbox serve` prints). */
  baseURL: string | URL;
  /** Called before each request for the headers that authorize it. */
  auth?: HttpSandboxAuth;
  /** Reach the server through this Unix socket (baseURL then only gives the path prefix). */
  socketPath?: string;
  /**
   * How new sandboxes are filled.
   * @default "empty"
   */
  template?: SandboxTemplate;
  /**
   * How long a call other than `exec` (and `acquire`, which may clone) may take.
   * @default 30_000
   */
  requestTimeoutMs?: number;
  /**
   * How long `acquire` may take (a git template clones).
   * @default 180_000
   */
  acquireTimeoutMs?: number;
  /**
   * How long a running command's stream may stay silent (the server sends a heartbeat every few
   * seconds) before the server is taken for gone.
   * @default 30_000
   */
  streamIdleTimeoutMs?: number;
  /**
   * Keep-alive connections kept per server.
   * @default 64
   */
  maxSockets?: number;
}

/** Options of {@link HttpSandboxClient.exec}. */
export interface HttpExecOptions extends ExecOptions {
  /** Called with each chunk of output as the server streams it (at most `maxOutputBytes` a stream). */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

/** A {@link SandboxClient} of one sandbox on a sandbox server. */
export interface HttpSandboxClient extends SandboxClient {
  exec(command: string, options?: HttpExecOptions): Promise<ExecResult>;
}

/** A sandbox on a sandbox server. */
export interface HttpSandboxSession extends SandboxSession {
  readonly client: HttpSandboxClient;
  /** The workspace root as its commands see it. */
  readonly root: string;
}

/** Hands out sandboxes of one sandbox server. */
export interface HttpStreamSandboxProvider extends SandboxProvider {
  acquire(options?: {
    abortSignal?: AbortSignal;
    /** Overrides the provider's template for this sandbox. */
    template?: SandboxTemplate;
  }): Promise<HttpSandboxSession>;
  /** The server's health: resolves when it answers, throws an unavailable error when not. */
  health(options?: {
    abortSignal?: AbortSignal;
  }): Promise<{ sandboxes: number; maxSandboxes: number }>;
  /** Close the kept connections. Sessions already acquired stop working. */
  close(): void;
}

interface Exchange {
  status: number;
  response: http.IncomingMessage;
}

/**
 * A vendor adapter for `pleach sandbox serve` (or anything that speaks its protocol, see
 * PROTOCOL.md): `acquire()` creates a sandbox on the server, `release()` destroys it. Commands'
 * output streams as it comes (`onOutput`); results, limits and `ToolError` codes are those of the
 * local client. A server that cannot be reached, or goes away mid-call, gives an error
 * `isSandboxUnavailable` recognizes. Nothing is retried here: that is the pool's decision.
 */
export function createHttpStreamSandboxProvider({
  baseURL,
  auth,
  socketPath,
  template = "empty",
  requestTimeoutMs = 30_000,
  acquireTimeoutMs = 180_000,
  streamIdleTimeoutMs = 30_000,
  maxSockets = 64,
}: HttpStreamSandboxProviderOptions): HttpStreamSandboxProvider {
  const base = new URL(baseURL);
  if (base.protocol !== "http:" && base.protocol !== "https:") {
    throw new ToolError("INVALID_INPUT", `baseURL must be http: or https:, got ${base.href}`);
  }
  const transport = base.protocol === "https:" ? https : http;
  let agent: http.Agent | undefined;
  const where = socketPath === undefined ? base.origin : `unix:${socketPath}`;
  // The bytes of a file read are decoded into a string at once: their buffer serves the next read.
  const spare = new SpareBuffer(8 * 1024 * 1024);
  // File reads over plain HTTP take a leaner path than Node's client (see RawGetter).
  const rawGetter =
    base.protocol === "http:"
      ? new RawGetter(
          socketPath === undefined
            ? { host: base.hostname.replace(/^\[|\]$/g, ""), port: Number(base.port || 80) }
            : { path: socketPath },
          base.host,
          PREALLOCATE_LIMIT,
        )
      : undefined;
  /** What the lean path needs for a request (its target path is the caller's). */
  const rawOptions = async () => ({
    headers: { ...(await auth?.())?.headers },
    timeoutMs: requestTimeoutMs,
    into: spare,
    timeoutError: () =>
      sandboxUnavailableError({
        message: `the sandbox server at ${where} did not answer within ${requestTimeoutMs} ms; it may be overloaded or gone`,
        details: { reason: "timeout" },
      }),
    brokenError: (cause: Error) => unreachable(where, cause),
  });
  const targetOf = (route: string) =>
    `${base.pathname.replace(/\/$/, "")}${PROTOCOL_PREFIX}${route}`;
  /** A 2xx answer's bytes; another answer's error thrown as a ToolError. */
  const bytesOf = ({ status, body }: { status: number; body: Buffer }): Buffer => {
    if (status >= 200 && status < 300) return body;
    throw fromWire(status, body.toString("utf8"), where);
  };
  /** The bytes of a GET's 2xx answer, through the lean path when it can carry it. */
  const getBytes = async (route: string): Promise<Buffer> => {
    if (rawGetter !== undefined) {
      const answer = await rawGetter.get(targetOf(route), await rawOptions());
      if (answer !== undefined) return bytesOf(answer);
    }
    return callBytes(route, { method: "GET", into: spare });
  };
  /**
   * Write `bytes` (a buffer of `spare`, given back here) to `filePath` of sandbox `id`: large
   * ones over a file channel (see PROTOCOL.md), the rest as a PUT on a kept connection.
   */
  const putBytes = async (
    id: string,
    filePath: string,
    route: string,
    bytes: Buffer,
  ): Promise<void> => {
    if (rawGetter !== undefined && bytes.length >= FILE_CHANNEL_MIN_BYTES) {
      let answer: { status: number; body: Buffer } | undefined;
      try {
        answer = await rawGetter.upload(
          targetOf(FILE_CHANNEL_ROUTE.slice(PROTOCOL_PREFIX.length)),
          FILE_CHANNEL_PROTOCOL,
          id,
          filePath,
          bytes,
          await rawOptions(),
        );
      } catch (error) {
        spare.giveBack(bytes);
        throw error;
      }
      if (answer !== undefined) {
        spare.giveBack(bytes);
        bytesOf(answer);
        return;
      }
      // Not sent (a header or path the channel cannot carry): a plain PUT.
    }
    await callBytes(route, { method: "PUT", body: bytes, sent: () => spare.giveBack(bytes) });
  };

  const exchange = async ({
    method,
    route,
    body,
    abortSignal,
    timeoutMs,
    sent,
  }: {
    method: string;
    route: string;
    body?: unknown;
    abortSignal?: AbortSignal;
    timeoutMs: number;
    /** Called once the whole request is handed to the kernel (a raw body is free again then). */
    sent?: () => void;
  }): Promise<Exchange> => {
    if (abortSignal?.aborted)
      throw new ToolError("ABORTED", "the call was aborted before it was sent");
    const headers: Record<string, string> = { ...(await auth?.())?.headers };
    const raw = Buffer.isBuffer(body);
    const payload =
      body === undefined ? undefined : raw ? body : Buffer.from(JSON.stringify(body), "utf8");
    if (payload !== undefined) {
      headers["content-type"] = raw ? "application/octet-stream" : "application/json";
      headers["content-length"] = String(payload.length);
    }
    // Idle kept sockets are dropped after 30 s, well before the server's 65 s: a request is never
    // sent on a socket the server is closing (an exec that met that could not be retried). Every
    // request and answer is written whole, so Nagle's algorithm would only delay the last segment.
    agent ??= new transport.Agent({
      keepAlive: true,
      maxSockets,
      scheduling: "lifo",
      timeout: 30_000,
      noDelay: true,
    });
    const url = new URL(`${base.pathname.replace(/\/$/, "")}${PROTOCOL_PREFIX}${route}`, base);
    return new Promise<Exchange>((resolve, reject) => {
      const request = transport.request(url, {
        method,
        headers,
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
      const timer = setTimeout(
        () =>
          fail(
            sandboxUnavailableError({
              message: `the sandbox server at ${where} did not answer within ${timeoutMs} ms; it may be overloaded or gone`,
              details: { reason: "timeout" },
            }),
          ),
        timeoutMs,
      );
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
        resolve({ status: response.statusCode ?? 0, response });
      });
      request.end(payload, sent);
    });
  };

  /** A call whose 2xx answer is bytes; other answers are thrown as ToolErrors. */
  const callBytes = async (
    route: string,
    {
      method = "POST",
      body,
      abortSignal,
      timeoutMs = requestTimeoutMs,
      into,
      sent,
    }: {
      method?: string;
      body?: unknown;
      abortSignal?: AbortSignal;
      timeoutMs?: number;
      /** Where a 2xx answer's bytes go; the caller gives the buffer back. */
      into?: SpareBuffer;
      sent?: () => void;
    },
  ): Promise<Buffer> => {
    const deadline = performance.now() + timeoutMs;
    const { status, response } = await exchange({
      method,
      route,
      body,
      abortSignal,
      timeoutMs,
      sent,
    });
    const ok = status >= 200 && status < 300;
    const bytes = await readBody(response, {
      where,
      abortSignal,
      deadline,
      timeoutMs,
      into: ok ? into : undefined,
    });
    return bytesOf({ status, body: bytes });
  };

  /** A JSON call: the parsed body of a 2xx answer, or the answer's error thrown as a ToolError. */
  const call = async <Result>(
    route: string,
    options: { method?: string; body?: unknown; abortSignal?: AbortSignal; timeoutMs?: number },
  ): Promise<Result> => {
    const text = (await callBytes(route, options)).toString("utf8");
    return (text === "" ? {} : JSON.parse(text)) as Result;
  };

  const clientOf = (id: string): HttpSandboxClient => {
    const prefix = `/sandboxes/${id}`;
    // The file's bytes travel raw both ways; the encoding is applied here, at the caller's end.
    const fileRoute = (filePath: unknown, maxBytes?: number) => {
      if (typeof filePath !== "string") {
        throw new ToolError("INVALID_PATH", `a path must be a string, got ${typeof filePath}`);
      }
      const query = new URLSearchParams({ path: filePath });
      // The server refuses a larger file from its size, before reading it.
      if (maxBytes !== undefined) query.set("maxBytes", String(maxBytes));
      return `${prefix}/file?${query}`;
    };
    return {
      async readFile(filePath: string, options?: ReadFileOptions) {
        const encoding = encodingOf(options);
        const bytes = await getBytes(fileRoute(filePath, readLimitOf(options?.maxBytes)));
        try {
          return textOfBytes(bytes, encoding);
        } finally {
          spare.giveBack(bytes);
        }
      },
      async writeFile(filePath: string, content: string, options?: FileEncodingOptions) {
        const encoding = encodingOf(options);
        if (typeof content !== "string") {
          throw new ToolError("INVALID_INPUT", `content must be a string, got ${typeof content}`);
        }
        const route = fileRoute(filePath);
        await putBytes(id, filePath, route, bytesOfText(content, encoding, spare));
      },
      async exec(command: string, options: HttpExecOptions = {}) {
        const { cwd, timeoutMs, env, stdin, abortSignal, maxOutputBytes, onOutput } = options;
        if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
          throw new ToolError(
            "INVALID_INPUT",
            `timeoutMs must be a positive number, got ${timeoutMs}`,
          );
        }
        const { status, response } = await exchange({
          method: "POST",
          route: `${prefix}/exec`,
          body: { command, cwd, timeoutMs, env, stdin, maxOutputBytes },
          abortSignal,
          timeoutMs: requestTimeoutMs,
        });
        if (status !== 200) {
          const answer = await readBody(response, { where, abortSignal });
          throw fromWire(status, answer.toString("utf8"), where);
        }
        return readExecStream({ response, where, abortSignal, onOutput, streamIdleTimeoutMs });
      },
    };
  };

  return {
    async acquire({ abortSignal, template: chosen = template } = {}) {
      const created = await call<CreateSandboxResponse>("/sandboxes", {
        body: { template: chosen },
        abortSignal,
        timeoutMs: acquireTimeoutMs,
      });
      let released: Promise<void> | undefined;
      return {
        id: created.id,
        root: created.root,
        client: clientOf(created.id),
        release() {
          released ??= call(`/sandboxes/${created.id}`, { method: "DELETE" }).then(
            () => undefined,
            (error: unknown) => {
              // A sandbox the server no longer has is released already.
              if ((error as ToolError).details?.reason === "gone") return;
              throw error;
            },
          );
          return released;
        },
      };
    },
    async health({ abortSignal } = {}) {
      return call<{ sandboxes: number; maxSandboxes: number }>("/health", {
        method: "GET",
        abortSignal,
      });
    },
    close() {
      agent?.destroy();
      rawGetter?.close();
      agent = undefined;
    },
  };
}

function unreachable(where: string, error: Error): ToolError {
  const code = (error as NodeJS.ErrnoException).code;
  return sandboxUnavailableError({
    message: `could not reach the sandbox server at ${where} (${code ?? error.message}); it may be down: try again or use another server`,
    cause: error,
    details: { reason: "unreachable", errno: code },
  });
}

/** Answers up to this many bytes are read into one buffer of their declared length. */
const PREALLOCATE_LIMIT = 256 * 1024 * 1024;
/**
 * File writes of at least this many bytes go over a file channel, past the server's HTTP parser;
 * smaller ones as a PUT, where the parser costs little.
 */
const FILE_CHANNEL_MIN_BYTES = 64 * 1024;

/**
 * Read an answer's body whole: into one buffer of its declared length (allocated when the first
 * bytes come), or, without one, gathered and joined once. Aborting, or passing `deadline` (a
 * `performance.now()` time), cuts it short.
 */
function readBody(
  response: http.IncomingMessage,
  {
    where,
    abortSignal,
    deadline,
    timeoutMs,
    into,
  }: {
    where: string;
    abortSignal?: AbortSignal;
    deadline?: number;
    timeoutMs?: number;
    into?: SpareBuffer;
  },
): Promise<Buffer> {
  const header = response.headers["content-length"];
  const declared = header === undefined ? Number.NaN : Number(header);
  const preallocate = Number.isSafeInteger(declared) && declared <= PREALLOCATE_LIMIT;
  return new Promise<Buffer>((resolve, reject) => {
    let body: Buffer | undefined;
    let filled = 0;
    const chunks: Buffer[] = [];
    let stopped: ToolError | undefined;
    const stop = (error: ToolError) => {
      stopped ??= error;
      response.destroy();
    };
    const onAbort = () => stop(new ToolError("ABORTED", "the call was aborted"));
    const timer =
      deadline === undefined
        ? undefined
        : setTimeout(
            () =>
              stop(
                sandboxUnavailableError({
                  message: `the sandbox server at ${where} did not finish answering within ${timeoutMs} ms`,
                  details: { reason: "timeout" },
                }),
              ),
            Math.max(0, deadline - performance.now()),
          );
    abortSignal?.addEventListener("abort", onAbort, { once: true });
    const settle = (error?: Error) => {
      if (timer !== undefined) clearTimeout(timer);
      abortSignal?.removeEventListener("abort", onAbort);
      response.off("data", onData);
      if (stopped !== undefined) reject(stopped);
      else if (error !== undefined) reject(unreachable(where, error));
      else if (!response.complete || (preallocate && filled !== declared)) {
        reject(
          sandboxUnavailableError({
            message: `the sandbox server at ${where} broke off its answer`,
            details: { reason: "disconnected" },
          }),
        );
      } else if (preallocate) resolve(body ?? Buffer.alloc(0));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      if (!preallocate) chunks.push(chunk);
      else {
        body ??= into?.take(declared) ?? Buffer.allocUnsafe(declared);
        filled += chunk.copy(body, filled);
      }
    };
    response.on("data", onData);
    response.once("end", () => settle());
    response.once("error", (error) => settle(error));
    // A connection that closes before the end: `complete` is false, which says so.
    response.once("close", () => settle());
    if (abortSignal?.aborted) onAbort();
  });
}

/** The ToolError a non-2xx answer stands for. */
function fromWire(status: number, text: string, where: string): ToolError {
  let wire: Partial<WireError> | undefined;
  try {
    wire = (JSON.parse(text) as { error?: Partial<WireError> }).error;
  } catch {
    // Not our server, or a proxy's page: said below.
  }
  if (wire === undefined || typeof wire.message !== "string") {
    const message = `the sandbox server at ${where} answered HTTP ${status} without a pleach error: ${text.slice(0, 200)}`;
    return status === 502 || status === 503 || status === 504
      ? sandboxUnavailableError({ message, details: { reason: "gateway", status } })
      : new ToolError("INTERNAL", message, { details: { status } });
  }
  return toolErrorOf(wire, status);
}

function toolErrorOf(wire: Partial<WireError>, status?: number): ToolError {
  const code: ToolErrorCode = WIRE_ERROR_CODES.has(wire.code ?? "")
    ? (wire.code as ToolErrorCode)
    : "INTERNAL";
  const details = wire.details;
  if (status === 503 || status === 410 || details?.unavailable === true) {
    return sandboxUnavailableError({
      message: wire.message ?? "the sandbox is unavailable",
      details: { ...details, status },
    });
  }
  return new ToolError(
    code,
    wire.message ?? "the sandbox server failed",
    details === undefined ? {} : { details },
  );
}

/** Read an exec answer's NDJSON events up to its `exit` (or `error`). */
function readExecStream({
  response,
  where,
  abortSignal,
  onOutput,
  streamIdleTimeoutMs,
}: {
  response: http.IncomingMessage;
  where: string;
  abortSignal: AbortSignal | undefined;
  onOutput: HttpExecOptions["onOutput"];
  streamIdleTimeoutMs: number;
}): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve, reject) => {
    let settled = false;
    let pending = "";
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      abortSignal?.removeEventListener("abort", onAbort);
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

    const onEvent = (event: ExecEvent) => {
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
    response.setEncoding("utf8");
    response.on("data", (text: string) => {
      clearTimeout(idle);
      idle = setTimeout(onIdle, streamIdleTimeoutMs);
      pending += text;
      let newline = pending.indexOf("\n");
      while (newline >= 0 && !settled) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line !== "") {
          try {
            onEvent(JSON.parse(line) as ExecEvent);
          } catch (error) {
            settle(() =>
              reject(
                new ToolError(
                  "INTERNAL",
                  `the sandbox server at ${where} sent a line that is not an exec event`,
                  {
                    cause: error,
                  },
                ),
              ),
            );
          }
        }
        newline = pending.indexOf("\n");
      }
    });
    const ended = () =>
      settle(() =>
        reject(
          sandboxUnavailableError({
            message: `the connection to the sandbox server at ${where} ended before the command did; the server may have stopped, and the command's outcome is unknown`,
            details: { reason: "disconnected" },
          }),
        ),
      );
    response.on("end", ended);
    response.on("close", ended);
    response.on("error", ended);
  });
}

type FileEncoding = NonNullable<FileEncodingOptions["encoding"]>;

/** The caller's encoding, refused as the local client refuses it. */
function encodingOf(options: FileEncodingOptions | undefined): FileEncoding {
  const encoding = options?.encoding ?? "utf8";
  if (encoding !== "utf8" && encoding !== "base64") {
    throw new ToolError(
      "INVALID_INPUT",
      `encoding must be "utf8" or "base64", got ${JSON.stringify(encoding)}`,
    );
  }
  return encoding;
}

/** A file's bytes as `readFile` returns them. */
function textOfBytes(bytes: Buffer, encoding: FileEncoding): string {
  if (encoding === "base64") return bytes.toString("base64");
  return decodeUtf8(bytes);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The bytes `writeFile(content, { encoding })` writes: those the local client writes, with its
 * refusal of text that is not base64 (whitespace ignored). UTF-8 is encoded into a buffer of
 * `spare`.
 */
function bytesOfText(content: string, encoding: FileEncoding, spare: SpareBuffer): Buffer {
  if (encoding === "utf8") {
    const bytes = spare.take(Buffer.byteLength(content, "utf8"));
    bytes.write(content, 0, "utf8");
    return bytes;
  }
  const bytes = Buffer.from(content, "base64");
  // Canonical base64, what encoders write, is valid: no need to look at each character.
  if (bytes.toString("base64") === content) return bytes;
  if (!BASE64.test(content.replace(/\s+/g, ""))) {
    throw new ToolError("INVALID_INPUT", "content is not valid base64");
  }
  return bytes;
}
