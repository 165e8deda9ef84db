import { chmod, mkdir, realpath } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ToolError } from "@pleach/core";
import { parseNetworkOption } from "../network/domain-rules.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { isInside } from "../paths.js";
import { createConnectionLimits } from "./connection-limits.js";
import { createE2BRoutes } from "./e2b/e2b-routes.js";
import { hidePaths } from "./hide-paths.js";
import { answerOf, HttpError, sendJson, shuttingDown } from "./http-errors.js";
import { DEFAULT_MAX_JOB_WAIT_MS } from "./job-protocol.js";
import type { SandboxServer, SandboxServerOptions } from "./options.js";
import { drainUnreadBody } from "./read-body.js";
import { createRequestGuard } from "./request-guard.js";
import { createRoutes } from "./routes.js";
import { createSandboxRegistry } from "./sandbox-registry.js";

export type { SandboxServer, SandboxServerOptions } from "./options.js";

const SHUTTING_DOWN = "the sandbox server is shutting down";

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
  session = {},
  maxJobWaitMs = DEFAULT_MAX_JOB_WAIT_MS,
  shutdownGraceMs = 5_000,
  hiddenFiles = [],
  workspacePath,
  commandWrapper,
  protocol = "pleach",
  e2bTemplates,
  onError = () => {},
}: SandboxServerOptions): Promise<SandboxServer> {
  // Checked before anything is made or listens: a bad token, host or limit throws here.
  const limits = createConnectionLimits(connectionLimits);
  // Header and request timeouts stay on (a request must arrive in time; an answer such as an exec
  // stream is not bounded by them), and connections are counted (see connection-limits.ts).
  const server = http.createServer({ ...limits.serverOptions });
  const guard = createRequestGuard({
    token,
    server,
    host: socketPath === undefined ? host : undefined,
    allowedHosts,
    realm: "pleach-sandbox",
    // The E2B SDK sends the token as its API key, and to envd as the sandbox's access token.
    tokenHeaders: protocol === "e2b" ? ["x-api-key", "x-access-token"] : [],
  });
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
  const wrapper = hidePaths({
    // Its commands never run in warm sandboxes (see hidePaths), so none is started.
    wrapper: commandWrapper ?? createCommandWrapper({ warmSandbox: false }),
    folders: [rootReal],
    files: hiddenFiles,
  });
  // Checked now: a wrong domain pattern stops the server from starting, not each sandbox.
  parseNetworkOption(network);
  const registry = createSandboxRegistry({
    rootReal,
    templateRootReal: templateRoot === undefined ? undefined : await realpath(templateRoot),
    workspacePath,
    wrapper,
    mode,
    network,
    maxSandboxes,
    maxFileBytes,
    limits: {
      defaultTimeoutMs: defaultExecTimeoutMs,
      maxTimeoutMs: maxExecTimeoutMs,
      maxOutputBytes,
    },
    gitProtocols,
    gitTimeoutMs,
    idleTimeoutMs,
    session,
    onError,
  });
  const routes =
    protocol === "e2b"
      ? createE2BRoutes({
          registry,
          maxRequestBytes,
          heartbeatMs,
          token,
          templates: e2bTemplates,
          templateRoot: templateRoot !== undefined,
        })
      : createRoutes({ registry, maxSandboxes, maxRequestBytes, heartbeatMs, maxJobWaitMs });
  let closing = false;

  const handle = async (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> => {
    const refusal = guard(request);
    if (refusal !== undefined) {
      for (const [name, value] of Object.entries(refusal.headers)) response.setHeader(name, value);
      throw new HttpError(refusal.status, {
        code: "PERMISSION_DENIED",
        message: refusal.message,
        ...(refusal.details === undefined ? {} : { details: refusal.details }),
      });
    }
    // A connection the limits closed meanwhile (408) gets nothing more.
    if (!limits.authorized(request.socket)) return;
    if (closing) throw shuttingDown();
    await routes.handle(request, response);
  };

  server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    handle(request, response).catch(async (error: unknown) => {
      const { status, body } = routes.errorBody?.(error) ?? errorBodyOf(error);
      if (response.headersSent) {
        response.end();
        return;
      }
      const unread = !request.complete;
      // A connection whose request body was left unread (or was bad) is not reused.
      if (unread || status === 400) response.setHeader("connection", "close");
      if (unread) await drainUnreadBody(request);
      sendJson(response, status, body);
    });
  });
  limits.attach(server);
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
      return registry.size;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        limits.close();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        registry.stop(SHUTTING_DOWN);
        routes.stop?.();
        server.closeIdleConnections();
        const grace = setTimeout(() => server.closeAllConnections(), shutdownGraceMs);
        await stopped;
        clearTimeout(grace);
        await registry.destroyAll(SHUTTING_DOWN);
        // Aborted commands end a moment later; what they made is looked at only then.
        await routes.commandsDone();
        await wrapper.close?.();
      })();
      return closed;
    },
  };
}

/** pleach's protocol's answer to an error: `{ error: WIRE_ERROR }` with its status. */
function errorBodyOf(error: unknown): { status: number; body: unknown } {
  const { status, wire } = answerOf(error);
  return { status, body: { error: wire } };
}

function hostOf(address: AddressInfo): string {
  return address.family === "IPv6" ? `[${address.address}]` : address.address;
}
