import { ToolError } from "@pleach/core";
import type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  ReadFileOptions,
  SandboxClient,
  SandboxProvider,
  SandboxSession,
} from "@pleach/core/sandbox";
import {
  checkExecOptions,
  checkFileContent,
  type FileEncoding,
  fileEncodingOf,
  SANDBOX_SPECIFICATION_VERSION,
} from "@pleach/core/sandbox";
import { readExecStream } from "./http-exec-stream.js";
import { createHttpJobs, type HttpSandboxJobs } from "./http-jobs.js";
import { createHttpRequester } from "./http-request.js";
import { readLimitOf } from "./read-limit.js";
import {
  type CreateSandboxResponse,
  PROTOCOL_PREFIX,
  type SandboxTemplate,
} from "./server/protocol.js";
import { errorOfAnswer } from "./server/wire-errors.js";

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
  /** Its background jobs, when the server runs them (it says so when the sandbox is created). */
  readonly jobs?: HttpSandboxJobs;
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
  const where = socketPath === undefined ? base.origin : `unix:${socketPath}`;
  const requester = createHttpRequester({ base, socketPath, maxSockets, where });

  /**
   * A call whose 2xx answer's body is returned as bytes; another answer is thrown as the
   * `ToolError` it carries. `body` is sent as is (a `Buffer`, a file's bytes) or as JSON.
   */
  const call = async (
    route: string,
    {
      method = "POST",
      body,
      abortSignal,
      timeoutMs = requestTimeoutMs,
    }: { method?: string; body?: unknown; abortSignal?: AbortSignal; timeoutMs?: number },
  ): Promise<Buffer> => {
    const deadline = performance.now() + timeoutMs;
    const headers: Record<string, string> = { ...(await auth?.())?.headers };
    let payload: Buffer | undefined;
    if (Buffer.isBuffer(body)) {
      headers["content-type"] = "application/octet-stream";
      payload = body;
    } else if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = Buffer.from(JSON.stringify(body), "utf8");
    }
    const response = await requester.send({
      method,
      target: `${PROTOCOL_PREFIX}${route}`,
      headers,
      body: payload,
      abortSignal,
      timeoutMs,
    });
    const bytes = await requester.readAll(response, { abortSignal, deadline, timeoutMs });
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return bytes;
    throw errorOfAnswer(status, bytes.toString("utf8"), where);
  };

  /** A JSON call: the parsed body of a 2xx answer. */
  const callJson = async <Result>(
    route: string,
    options: { method?: string; body?: unknown; abortSignal?: AbortSignal; timeoutMs?: number },
  ): Promise<Result> => {
    const text = (await call(route, options)).toString("utf8");
    return (text === "" ? {} : JSON.parse(text)) as Result;
  };

  const clientOf = ({ id, jobs }: CreateSandboxResponse): HttpSandboxClient => {
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
    const client: HttpSandboxClient = {
      async readFile(filePath: string, options?: ReadFileOptions) {
        const encoding = fileEncodingOf(options);
        const route = fileRoute(filePath, readLimitOf(options?.maxBytes));
        return textOfBytes(await call(route, { method: "GET" }), encoding);
      },
      async writeFile(filePath: string, content: string, options?: FileEncodingOptions) {
        const encoding = fileEncodingOf(options);
        checkFileContent(content, encoding);
        const route = fileRoute(filePath);
        await call(route, { method: "PUT", body: Buffer.from(content, encoding) });
      },
      async exec(command: string, options: HttpExecOptions = {}) {
        const { cwd, timeoutMs, env, stdin, abortSignal, onOutput } = options;
        const { maxOutputBytes, fullOutputOverBytes } = options;
        checkExecOptions(options);
        const response = await requester.send({
          method: "POST",
          target: `${PROTOCOL_PREFIX}${prefix}/exec`,
          headers: { ...(await auth?.())?.headers, "content-type": "application/json" },
          body: Buffer.from(
            JSON.stringify({
              command,
              cwd,
              timeoutMs,
              env,
              stdin,
              maxOutputBytes,
              fullOutputOverBytes,
            }),
            "utf8",
          ),
          abortSignal,
          timeoutMs: requestTimeoutMs,
        });
        if (response.statusCode !== 200) {
          const answer = await requester.readAll(response, { abortSignal });
          throw errorOfAnswer(response.statusCode ?? 0, answer.toString("utf8"), where);
        }
        return readExecStream({ response, where, abortSignal, onOutput, streamIdleTimeoutMs });
      },
    };
    if (jobs !== true) return client;
    return {
      ...client,
      jobs: createHttpJobs({ request: call, prefix, requestTimeoutMs, where }),
    };
  };

  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    async acquire({ abortSignal, template: chosen = template } = {}) {
      const created = await callJson<CreateSandboxResponse>("/sandboxes", {
        body: { template: chosen },
        abortSignal,
        timeoutMs: acquireTimeoutMs,
      });
      let released: Promise<void> | undefined;
      return {
        id: created.id,
        root: created.root,
        client: clientOf(created),
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
      return callJson<{ sandboxes: number; maxSandboxes: number }>("/health", {
        method: "GET",
        abortSignal,
      });
    },
    close() {
      requester.close();
    },
  };
}

/** A file's bytes as `readFile` returns them. */
function textOfBytes(bytes: Buffer, encoding: FileEncoding): string {
  return bytes.toString(encoding);
}
