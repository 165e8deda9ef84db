import { randomBytes } from "node:crypto";
import { chmod, mkdir, readdir, realpath, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import type { Duplex } from "node:stream";
import { isToolError, ToolError, type ToolErrorCode } from "@pleach/core";
import type { SandboxMode } from "@pleach/core/sandbox";
import { workspaceRoot } from "../beneath.js";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import { type CommandWrapper, createCommandWrapper, protectionWith } from "../os/index.js";
import { isInside } from "../paths.js";
import { SpareBuffer } from "../spare-buffer.js";
import { createBearerTokenCheck } from "./bearer-token.js";
import { type ConnectionLimitsOptions, createConnectionLimits } from "./connection-limits.js";
import { serveFileChannel } from "./file-channel.js";
import { hidePaths } from "./hide-paths.js";
import {
  type CreateSandboxResponse,
  type ExecEvent,
  type ExecRequest,
  FILE_CHANNEL_PROTOCOL,
  FILE_CHANNEL_ROUTE,
  PROTOCOL_PREFIX,
  statusOfCode,
  type WireError,
} from "./protocol.js";
import { createRawFiles, type RawFiles } from "./raw-files.js";
import { createRequestOriginCheck, type RequestOriginCheck } from "./request-origin.js";
import { execStreaming, type StreamingExecLimits } from "./stream-exec.js";
import { fillWorkspace } from "./templates.js";

/** Options of {@link createSandboxServer}. */
export interface SandboxServerOptions {
  /** The folder the sandboxes' workspaces are made in (one folder each). Created if missing. */
  root: string;
  /** The bearer token every request must carry (`Authorization: Bearer TOKEN`). */
  token: string;
  /**
   * The address to listen on. Anything but loopback exposes the server: do it deliberately.
   * @default "127.0.0.1"
   */
  host?: string;
  /**
   * The port; `0` picks a free one (read it from `url`).
   * @default 0
   */
  port?: number;
  /**
   * Hosts accepted in a request's `Host` and `Origin` headers beside loopback (`localhost`,
   * `127.0.0.0/8`, `[::1]`) and the address the server listens on (every address of this machine
   * for `0.0.0.0` or `::`): names or addresses, any port, `.example.com` for a domain and every
   * name under it. Any other `Host` or `Origin` is refused with 403 before the token is checked
   * (DNS rebinding protection). See `createRequestOriginCheck`.
   * @default []
   */
  allowedHosts?: readonly string[];
  /**
   * Listen on this Unix socket instead of `host` and `port` (a container with no network at all,
   * reached through a socket in a mounted folder).
   */
  socketPath?: string;
  /**
   * The mode of the socket: who may connect (the token is still needed).
   * @default 0o600
   */
  socketMode?: number;
  /**
   * The sandbox mode of every sandbox, as for the local client.
   * @default "workspace-write"
   */
  mode?: SandboxMode;
  /**
   * Whether commands may reach the network.
   * @default false
   */
  network?: boolean;
  /**
   * The most sandboxes alive at once; creating one more is refused (503) until one goes.
   * @default 64
   */
  maxSandboxes?: number;
  /**
   * The largest request body, in bytes (a `writeFile`'s content travels in it).
   * @default 33_554_432
   */
  maxRequestBytes?: number;
  /**
   * The largest file `readFile` returns, in bytes.
   * @default 33_554_432
   */
  maxFileBytes?: number;
  /**
   * Bytes kept of each of stdout and stderr of a command, and the most a call may ask for.
   * @default 10_485_760
   */
  maxOutputBytes?: number;
  /**
   * Time limit of a command when the call gives none, in milliseconds.
   * @default 600_000
   */
  defaultExecTimeoutMs?: number;
  /**
   * The longest time limit a call may ask for; longer ones are cut to it.
   * @default 3_600_000
   */
  maxExecTimeoutMs?: number;
  /**
   * A sandbox with no request and no running command for this long is destroyed.
   * @default 1_800_000
   */
  idleTimeoutMs?: number;
  /** Where `{ folder }` templates are looked up; without it they are refused. */
  templateRoot?: string;
  /**
   * URL schemes `{ git }` templates may use; `[]` refuses them. A git template is cloned inside
   * the new sandbox, by its own confinement and network rule (`network`; a read-only sandbox is
   * cloned in a workspace-write invocation of the same wrapper before it is handed out): with the
   * network off, only `file://` repositories the sandbox can see clone. The server never runs git.
   * @default ["https"]
   */
  gitProtocols?: readonly string[];
  /**
   * How long a template's clone may take, in milliseconds.
   * @default 120_000
   */
  gitTimeoutMs?: number;
  /**
   * Limits on connections: header and request timeouts, the most connections open at once (then
   * 503 with `Retry-After`), and on connections that have made no authorised request yet (408 and
   * closed past a count or a deadline). See {@link ConnectionLimitsOptions} for the defaults.
   * @default {}
   */
  connectionLimits?: ConnectionLimitsOptions;
  /**
   * How often a running command's stream carries a heartbeat line, so that clients can tell a
   * silent command from a dead server.
   * @default 5_000
   */
  heartbeatMs?: number;
  /**
   * On `close()`, how long requests in flight have to finish (running commands are killed at once).
   * @default 5_000
   */
  shutdownGraceMs?: number;
  /** Files confined commands must not read, such as the token file. */
  hiddenFiles?: readonly string[];
  /**
   * Where the workspace of a new sandbox is made.
   * @default (id) => path.join(root, id)
   */
  workspacePath?: (sandboxId: string) => string;
  /** How commands are confined; by default the host's OS sandbox. */
  commandWrapper?: CommandWrapper;
  /** Called with errors no request can be told of (a failed cleanup). */
  onError?: (error: Error) => void;
}

/** A running sandbox server. */
export interface SandboxServer {
  /** Where it listens, such as `http://127.0.0.1:41234/` (`http://localhost/` on a socket). */
  readonly url: URL;
  /** The Unix socket it listens on, when it does. */
  readonly socketPath: string | undefined;
  /** How many sandboxes are alive. */
  readonly sandboxCount: number;
  /**
   * Stop: refuse new requests, kill running commands (their callers get an `ABORTED` error event
   * that says the server is shutting down), let other requests finish, destroy every sandbox.
   */
  close(): Promise<void>;
}

interface HostedSandbox {
  id: string;
  workspace: string;
  client: LocalSandbox;
  /** Its files as bytes, for the file route. */
  files: RawFiles;
  limits: StreamingExecLimits;
  lastUsed: number;
  running: Set<AbortController>;
  /**
   * Whether the server made the workspace (in its root) and removes it with the sandbox; a folder
   * named by `workspacePath` outside the root (a host folder bound into a container) is the user's.
   */
  ownsWorkspace: boolean;
}

const ID_PATTERN = /^[a-f0-9]{32}$/;
const ROUTE = new RegExp(`^${PROTOCOL_PREFIX}/sandboxes(?:/([^/]+)(?:/(exec|file))?)?$`);

/**
 * Start a sandbox server: it hosts many sandboxes, each a fresh workspace folder served through the
 * local client's confinement and OS sandbox, and speaks the protocol of `PROTOCOL.md` to
 * `createHttpStreamSandboxProvider`. Every request needs the bearer token.
 */
export async function createSandboxServer({
  root,
  token,
  host = "127.0.0.1",
  port = 0,
  allowedHosts = [],
  socketPath,
  socketMode = 0o600,
  mode = "workspace-write",
  network = false,
  maxSandboxes = 64,
  maxRequestBytes = 32 * 1024 * 1024,
  maxFileBytes = 32 * 1024 * 1024,
  maxOutputBytes = 10 * 1024 * 1024,
  defaultExecTimeoutMs = 600_000,
  maxExecTimeoutMs = 3_600_000,
  idleTimeoutMs = 1_800_000,
  templateRoot,
  gitProtocols = ["https"],
  gitTimeoutMs = 120_000,
  connectionLimits = {},
  heartbeatMs = 5_000,
  shutdownGraceMs = 5_000,
  hiddenFiles = [],
  workspacePath,
  commandWrapper,
  onError = () => {},
}: SandboxServerOptions): Promise<SandboxServer> {
  if (typeof token !== "string" || token.length < 16 || /\s/.test(token)) {
    throw new ToolError(
      "INVALID_INPUT",
      "the server token must be at least 16 characters without whitespace (e.g. openssl rand -hex 32)",
    );
  }
  await mkdir(root, { recursive: true, mode: 0o700 });
  const rootReal = await realpath(root);
  for (const system of ["/usr", "/etc", "/bin", "/proc"]) {
    if (isInside(rootReal, system)) {
      throw new ToolError(
        "UNSUPPORTED",
        `the server root ${rootReal} contains ${system}; choose a folder of its own`,
      );
    }
  }
  const templateRootReal = templateRoot === undefined ? undefined : await realpath(templateRoot);
  // Checked before anything listens: a bad limit throws here.
  const limits = createConnectionLimits(connectionLimits);
  const wrapper = hidePaths({
    // Its commands never run in warm sandboxes (see hidePaths), so none is started.
    wrapper: commandWrapper ?? createCommandWrapper({ warmSandbox: false }),
    folders: [rootReal],
    files: hiddenFiles,
  });
  const originListen = socketPath === undefined ? [host] : [];
  // Made again once listening, with the address bound; made now so a bad host throws before.
  let checkOrigin: RequestOriginCheck = createRequestOriginCheck({
    allowedHosts,
    listenAddresses: originListen,
  });
  /** The 403 of a request whose Host or Origin is not accepted (DNS rebinding protection). */
  const refusedOrigin = (request: http.IncomingMessage): HttpError | undefined => {
    const refusal = checkOrigin(request.headers);
    if (refusal === undefined) return undefined;
    return new HttpError(403, {
      code: "PERMISSION_DENIED",
      message: refusal.message,
      details: {
        refused: refusal.header,
        value: refusal.value ?? null,
        ...(refusal.allowWith === undefined ? {} : { allowWith: refusal.allowWith }),
      },
    });
  };
  // File bodies up to this size, read or written, reuse one buffer between requests.
  const spare = new SpareBuffer(Math.min(maxRequestBytes, maxFileBytes, 8 * 1024 * 1024));
  const sandboxes = new Map<string, HostedSandbox>();
  /** Clones of templates under way, stopped when the server closes. */
  const filling = new Set<AbortController>();
  let creating = 0;
  let closing = false;
  /** Commands running now, each settled once its process group is gone and its sandbox let go. */
  const executing = new Set<Promise<void>>();

  const bearer = createBearerTokenCheck(token);
  const authorized = (request: http.IncomingMessage): boolean =>
    bearer(request.headers.authorization);

  const destroy = async (sandbox: HostedSandbox, reason: string): Promise<void> => {
    if (sandboxes.get(sandbox.id) !== sandbox) return;
    sandboxes.delete(sandbox.id);
    for (const controller of sandbox.running) controller.abort(reason);
    if (!sandbox.ownsWorkspace) return;
    await rm(sandbox.workspace, { recursive: true, force: true }).catch((error: Error) =>
      onError(error),
    );
  };

  const create = async (body: Record<string, unknown>): Promise<CreateSandboxResponse> => {
    if (sandboxes.size + creating >= maxSandboxes) {
      throw new HttpError(503, {
        code: "INTERNAL",
        message: `this server already hosts its limit of ${maxSandboxes} sandboxes; release one or use another server`,
        details: { unavailable: true, reason: "capacity" },
      });
    }
    creating += 1;
    try {
      const id = randomBytes(16).toString("hex");
      const workspace = path.resolve(workspacePath?.(id) ?? path.join(rootReal, id));
      const ownsWorkspace = workspacePath === undefined || isInside(rootReal, workspace);
      if (ownsWorkspace) {
        if ((await readdir(workspace).catch(() => [])).length > 0) {
          throw new ToolError("INTERNAL", `the workspace folder ${workspace} is not empty`);
        }
      } else if ((body.template ?? "empty") !== "empty") {
        // A template fills a folder of the server's, and a failed one is removed: never the user's.
        throw new ToolError(
          "INVALID_INPUT",
          "this server serves a workspace of yours (workspacePath), which a template would overwrite; create the sandbox empty",
        );
      }
      const filled = new AbortController();
      filling.add(filled);
      try {
        await fillWorkspace({
          folder: workspace,
          template: body.template,
          templateRoot: templateRootReal,
          gitProtocols,
          gitTimeoutMs,
          // A clone runs as a command of the new sandbox: same wrapper, mode and network rule, but
          // able to write the workspace when the sandbox is read-only (nothing else runs there yet).
          exec: async (command, options) => {
            const cloner = await createLocalSandbox({
              root: workspace,
              mode: mode === "read-only" ? "workspace-write" : mode,
              network,
              commandWrapper: wrapper,
            });
            return cloner.exec(command, options);
          },
          networkOff: !network && mode !== "danger-full-access",
          abortSignal: filled.signal,
        });
      } finally {
        filling.delete(filled);
      }
      const client = await createLocalSandbox({
        root: workspace,
        mode,
        network,
        defaultTimeoutMs: defaultExecTimeoutMs,
        defaultMaxOutputBytes: maxOutputBytes,
        maxFileBytes,
        commandWrapper: wrapper,
      });
      const sandbox: HostedSandbox = {
        id,
        workspace,
        client,
        files: createRawFiles({
          root: workspaceRoot(workspace, client.root),
          mode,
          maxFileBytes,
          spare,
          protection: () => protectionWith(wrapper, client.root),
        }),
        limits: {
          defaultTimeoutMs: defaultExecTimeoutMs,
          maxTimeoutMs: maxExecTimeoutMs,
          maxOutputBytes,
        },
        lastUsed: Date.now(),
        running: new Set(),
        ownsWorkspace,
      };
      if (closing) {
        if (ownsWorkspace) await rm(workspace, { recursive: true, force: true });
        throw shuttingDown();
      }
      sandboxes.set(id, sandbox);
      return { id, root: client.root };
    } finally {
      creating -= 1;
    }
  };

  const lookup = (id: string): HostedSandbox => {
    const sandbox = ID_PATTERN.test(id) ? sandboxes.get(id) : undefined;
    if (sandbox === undefined) {
      throw new HttpError(410, {
        code: "NOT_FOUND",
        message: `no sandbox ${id} on this server: it was released, destroyed after being idle, or the server restarted; acquire a new one`,
        details: { unavailable: true, reason: "gone" },
      });
    }
    sandbox.lastUsed = Date.now();
    return sandbox;
  };

  const exec = async (
    sandbox: HostedSandbox,
    body: Record<string, unknown>,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> => {
    const controller = new AbortController();
    sandbox.running.add(controller);
    let ended = () => {};
    const finished = new Promise<void>((resolve) => {
      ended = resolve;
    });
    executing.add(finished);
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
      const result = await execStreaming({
        client: sandbox.client,
        limits: sandbox.limits,
        request: body as unknown as ExecRequest,
        abortSignal: controller.signal,
        onOutput: (stream, data) => send({ type: stream, data }),
      });
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
      executing.delete(finished);
      ended();
    }
  };

  const handle = async (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> => {
    const refused = refusedOrigin(request);
    if (refused !== undefined) throw refused;
    if (!authorized(request)) {
      response.setHeader("www-authenticate", 'Bearer realm="pleach-sandbox"');
      throw unauthorized();
    }
    // A connection the limits closed meanwhile (408) gets nothing more.
    if (!limits.authorized(request.socket)) return;
    if (closing) throw shuttingDown();
    const url = new URL(request.url ?? "/", "http://sandbox.invalid");
    if (url.pathname === `${PROTOCOL_PREFIX}/health` && request.method === "GET") {
      sendJson(response, 200, { ok: true, sandboxes: sandboxes.size, maxSandboxes });
      return;
    }
    const route = ROUTE.exec(url.pathname);
    if (route === null) {
      throw new HttpError(404, {
        code: "UNSUPPORTED",
        message: `no route ${request.method} ${url.pathname}`,
      });
    }
    const [, id, action] = route;
    if (id === undefined) {
      if (request.method !== "POST") throw methodNotAllowed(request, url, "POST");
      const body = await readJson(request, maxRequestBytes);
      sendJson(response, 201, await create(body));
      return;
    }
    if (action === undefined) {
      if (request.method !== "DELETE") throw methodNotAllowed(request, url, "DELETE");
      await destroy(lookup(id), "the sandbox was released");
      response.writeHead(204).end();
      return;
    }
    if (action === "file") {
      if (request.method === "GET") {
        const sandbox = lookup(id);
        const { filePath, maxBytes } = fileQuery(url, "GET");
        const bytes = await sandbox.files.read(filePath, maxBytes);
        response.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": bytes.length,
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
        });
        // Handed to the kernel whole once the response finishes: the buffer is free again then.
        response.end(bytes, () => spare.giveBack(bytes));
        return;
      }
      if (request.method === "PUT") {
        const sandbox = lookup(id);
        const { filePath } = fileQuery(url, "PUT");
        checkRawBody(request);
        const body = await readBody(request, maxRequestBytes, spare);
        try {
          await sandbox.files.write(filePath, body);
        } finally {
          spare.giveBack(body);
        }
        response.writeHead(204, { "cache-control": "no-store" }).end();
        return;
      }
      throw methodNotAllowed(request, url, "GET, PUT");
    }
    if (request.method !== "POST") throw methodNotAllowed(request, url, "POST");
    const sandbox = lookup(id);
    await exec(sandbox, await readJson(request, maxRequestBytes), request, response);
  };

  // Header and request timeouts stay on (a request must arrive in time; an answer such as an exec
  // stream is not bounded by them), and connections are counted (see connection-limits.ts).
  const server = http.createServer({ ...limits.serverOptions }, (request, response) => {
    handle(request, response).catch((error: unknown) => {
      const { status, wire } = answerOf(error);
      if (response.headersSent) {
        response.end();
        return;
      }
      const unread = !request.complete;
      // A connection whose request body was left unread (or was bad) is not reused.
      if (unread || status === 400) response.setHeader("connection", "close");
      sendJson(response, status, { error: wire });
      if (unread) {
        // The body is drained for a moment, so the client reads our answer; a peer that is
        // still sending after that gets its connection cut.
        request.resume();
        const socket = request.socket;
        setTimeout(() => {
          if (!request.complete) socket.destroy();
        }, 1_000).unref();
      }
    });
  });
  limits.attach(server);
  // A request Node's parser refuses (a malformed header, a Content-Length that is no number, headers
  // too large) never reaches `handle`: it is answered here, in the same JSON, and its connection
  // closed. So is one whose headers or body did not arrive in time (408).
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      endWithAnswer(socket, 408, {
        code: "TIMEOUT",
        message: `the request did not arrive in time (headers within ${limits.serverOptions.headersTimeout} ms, the whole request within ${limits.serverOptions.requestTimeout} ms); nothing was done`,
        details: { unavailable: true, reason: "request-timeout" },
      });
      return;
    }
    endWithAnswer(socket, error.code === "HPE_HEADER_OVERFLOW" ? 431 : 400, {
      code: "INVALID_INPUT",
      message: `malformed HTTP request (${error.code ?? error.message}); nothing was done`,
    });
  });
  // File writes may also come over a file channel (see PROTOCOL.md): an upgraded connection whose
  // frames are read off the socket, past Node's parser.
  const channels = new Set<Duplex>();
  server.on("upgrade", (request: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    try {
      const refused = refusedOrigin(request);
      if (refused !== undefined) throw refused;
      if (request.headers.upgrade?.toLowerCase() !== FILE_CHANNEL_PROTOCOL) {
        throw badRequest(`the only upgrade this server takes is ${FILE_CHANNEL_PROTOCOL}`);
      }
      if (!authorized(request)) throw unauthorized();
      if (!limits.authorized(socket)) {
        socket.destroy();
        return;
      }
      if (closing) throw shuttingDown();
      const url = new URL(request.url ?? "/", "http://sandbox.invalid");
      if (url.pathname !== FILE_CHANNEL_ROUTE) {
        throw new HttpError(404, {
          code: "UNSUPPORTED",
          message: `no upgrade route ${url.pathname}: a file channel opens at ${FILE_CHANNEL_ROUTE}`,
        });
      }
      if (request.method !== "GET") throw methodNotAllowed(request, url, "GET");
    } catch (error) {
      const { status, wire } = answerOf(error);
      endWithAnswer(socket, status, wire);
      return;
    }
    channels.add(socket);
    socket.once("close", () => channels.delete(socket));
    // An upgrade's socket is the connection's own: a net.Socket (or a TLS one).
    const channel = socket as Socket;
    channel.setNoDelay(true);
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: ${FILE_CHANNEL_PROTOCOL}\r\n\r\n`,
    );
    serveFileChannel(channel, head, {
      maxBodyBytes: maxRequestBytes,
      spare,
      idleMs: 65_000,
      answerOf,
      async write(id, filePath, body) {
        if (closing) throw shuttingDown();
        await lookup(id).files.write(filePath, body);
      },
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const listening = () => {
      server.off("error", reject);
      resolve();
    };
    if (socketPath === undefined) server.listen(port, host, listening);
    else server.listen(socketPath, listening);
  });
  if (socketPath !== undefined) await chmod(socketPath, socketMode);
  const bound = server.address();
  if (typeof bound === "object" && bound !== null) {
    checkOrigin = createRequestOriginCheck({
      allowedHosts,
      listenAddresses: [...originListen, bound.address],
    });
  }

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const sandbox of sandboxes.values()) {
        if (sandbox.running.size === 0 && now - sandbox.lastUsed > idleTimeoutMs) {
          void destroy(sandbox, "the sandbox was idle too long");
        }
      }
    },
    Math.max(50, Math.min(idleTimeoutMs / 4, 30_000)),
  );
  sweeper.unref();

  const address = server.address();
  const url =
    typeof address === "object" && address !== null
      ? new URL(`http://${hostOf(address)}:${address.port}/`)
      : new URL("http://localhost/");
  let closed: Promise<void> | undefined;

  return {
    url,
    socketPath,
    get sandboxCount() {
      return sandboxes.size;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        clearInterval(sweeper);
        limits.close();
        for (const controller of filling) controller.abort("the sandbox server is shutting down");
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const sandbox of sandboxes.values()) {
          for (const controller of sandbox.running) {
            controller.abort("the sandbox server is shutting down");
          }
        }
        server.closeIdleConnections();
        for (const socket of channels) socket.destroy();
        const grace = setTimeout(() => server.closeAllConnections(), shutdownGraceMs);
        await stopped;
        clearTimeout(grace);
        await Promise.all(
          [...sandboxes.values()].map((sandbox) =>
            destroy(sandbox, "the sandbox server is shutting down"),
          ),
        );
        // Aborted commands end a moment later; their placeholders are let go only then.
        await Promise.all(executing);
        await wrapper.close?.();
      })();
      return closed;
    },
  };
}

/** A failure with its own HTTP status (401, 410, 503, ...). */
class HttpError extends Error {
  readonly status: number;
  readonly wire: WireError;
  constructor(status: number, wire: WireError) {
    super(wire.message);
    this.status = status;
    this.wire = wire;
  }
}

function hostOf(address: AddressInfo): string {
  return address.family === "IPv6" ? `[${address.address}]` : address.address;
}

function shuttingDown(): HttpError {
  return new HttpError(503, {
    code: "INTERNAL",
    message: "the sandbox server is shutting down; use another server",
    details: { unavailable: true, reason: "shutdown" },
  });
}

function methodNotAllowed(request: http.IncomingMessage, url: URL, allowed: string): HttpError {
  return new HttpError(405, {
    code: "UNSUPPORTED",
    message: `${request.method} is not allowed on ${url.pathname} (only ${allowed})`,
  });
}

function badRequest(message: string): HttpError {
  return new HttpError(400, { code: "INVALID_INPUT", message });
}

/**
 * The query of a file request: `path`, the workspace path, form-encoded; and on a read, optionally
 * `maxBytes`, the most bytes the caller wants (a larger file is refused from its size). Any other
 * parameter, one given twice or without a value, or an escape that does not decode to UTF-8 is
 * refused.
 */
function fileQuery(
  url: URL,
  method: "GET" | "PUT",
): { filePath: string; maxBytes: number | undefined } {
  let filePath: string | undefined;
  let maxBytes: number | undefined;
  const search = url.search.slice(1);
  for (const part of search === "" ? [] : search.split("&")) {
    const equals = part.indexOf("=");
    const name = decodeQuery(equals < 0 ? part : part.slice(0, equals));
    if (name !== "path" && !(name === "maxBytes" && method === "GET")) {
      throw badRequest(
        `unknown query parameter ${JSON.stringify(name)}: a file ${method === "GET" ? "read takes only ?path=FILE and &maxBytes=N" : "write takes only ?path=FILE"}`,
      );
    }
    if (equals < 0) {
      const example = name === "path" ? "?path=FILE" : "&maxBytes=N";
      throw badRequest(`the ${name} query parameter has no value: send ${example}`);
    }
    if ((name === "path" ? filePath : maxBytes) !== undefined) {
      throw badRequest(`the ${name} query parameter is given twice`);
    }
    const value = decodeQuery(part.slice(equals + 1));
    if (name === "path") filePath = value;
    else maxBytes = wholeBytes(value);
  }
  if (filePath === undefined) {
    throw badRequest("a file request needs the query parameter ?path=FILE (URL-encoded)");
  }
  return { filePath, maxBytes };
}

/** The `maxBytes` of a read: a whole number of bytes, written in decimal digits. */
function wholeBytes(value: string): number {
  const bytes = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(bytes)) {
    throw badRequest(
      `maxBytes must be a whole number of bytes in decimal digits, got ${JSON.stringify(value.slice(0, 100))}`,
    );
  }
  return bytes;
}

function decodeQuery(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    throw badRequest(
      `the query ${JSON.stringify(text.slice(0, 200))} is not URL-encoded UTF-8 (a % escape is malformed)`,
    );
  }
}

/** A file's body is its bytes as they are: no other media type, no content coding. */
function checkRawBody(request: http.IncomingMessage): void {
  const type = request.headers["content-type"];
  if (type !== undefined && !/^application\/octet-stream\s*(?:;|$)/i.test(type)) {
    throw new HttpError(415, {
      code: "INVALID_INPUT",
      message: `the body of a file write is the file's raw bytes: send Content-Type: application/octet-stream, not ${JSON.stringify(type.slice(0, 100))}`,
    });
  }
  const coding = request.headers["content-encoding"];
  if (coding !== undefined && coding.trim().toLowerCase() !== "identity") {
    throw new HttpError(415, {
      code: "INVALID_INPUT",
      message: `the body of a file write is the file's raw bytes: Content-Encoding ${JSON.stringify(coding.slice(0, 100))} is not supported`,
    });
  }
}

function toWireError(error: unknown): WireError {
  if (isToolError(error)) {
    const wire: WireError = { code: error.code as ToolErrorCode, message: error.message };
    if (error.details !== undefined) wire.details = error.details;
    return wire;
  }
  return {
    code: "INTERNAL",
    message: `the sandbox server failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  response.end(text);
}

/**
 * Read a body of at most `limit` bytes. A declared length over the limit is refused before a byte
 * is read; a declared length is read into one buffer of that size (from `spare` when given,
 * allocated when the first bytes come); a chunked body is gathered, refused as soon as it passes
 * the limit, and joined once.
 */
function readBody(
  request: http.IncomingMessage,
  limit: number,
  spare?: SpareBuffer,
): Promise<Buffer> {
  const header = request.headers["content-length"];
  // Node's parser has already refused a Content-Length that is not a number.
  const declared = header === undefined ? undefined : Number(header);
  if (declared !== undefined && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => {
    let body: Buffer | undefined;
    let filled = 0;
    const chunks: Buffer[] = [];
    const finish = (error?: Error) => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", finish);
      request.off("close", onClose);
      if (error !== undefined) reject(error);
      else if (declared === undefined) {
        resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, filled));
      } else if (filled !== declared) {
        reject(badRequest(`the body ended after ${filled} of its ${declared} bytes`));
      } else resolve(body ?? Buffer.alloc(0));
    };
    const onData = (chunk: Buffer) => {
      if (declared !== undefined) {
        body ??= spare?.take(declared) ?? Buffer.allocUnsafe(declared);
        // The parser passes no more than the declared length (`copy` stops at the end anyway).
        filled += chunk.copy(body, filled);
        return;
      }
      filled += chunk.length;
      if (filled > limit) finish(tooLarge(limit));
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    // The peer went away before the end of its body: nobody is left to answer.
    const onClose = () => finish(badRequest("the connection closed before the end of the body"));
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", finish);
    request.on("close", onClose);
  });
}

/** Read a JSON object body of at most `limit` bytes. */
async function readJson(
  request: http.IncomingMessage,
  limit: number,
): Promise<Record<string, unknown>> {
  const body = await readBody(request, limit);
  return body.length === 0 ? {} : parseJsonObject(body.toString("utf8"), "the request body");
}

function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, {
      code: "INVALID_INPUT",
      message: `${what} is not valid JSON: ${(error as Error).message}`,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, { code: "INVALID_INPUT", message: `${what} must be a JSON object` });
  }
  return value as Record<string, unknown>;
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, {
    code: "TOO_LARGE",
    message: `the request body is larger than this server's limit of ${limit} bytes; write big files in parts or raise --max-request-bytes`,
  });
}

function unauthorized(): HttpError {
  return new HttpError(401, {
    code: "PERMISSION_DENIED",
    message: "missing or wrong bearer token: send Authorization: Bearer TOKEN",
  });
}

/** The status and wire error a thrown error is answered with. */
function answerOf(error: unknown): { status: number; wire: WireError } {
  if (error instanceof HttpError) return { status: error.status, wire: error.wire };
  const wire = toWireError(error);
  return { status: statusOfCode(wire.code), wire };
}

/** Answer `wire` on a raw socket (a request refused before or instead of Node's handling) and close it. */
function endWithAnswer(socket: Duplex, status: number, wire: WireError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error: wire });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\n\r\n${body}`,
  );
}
