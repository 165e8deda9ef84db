import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, type McpServerFactory } from "@modelcontextprotocol/server";
import {
  type ConnectionLimitsOptions,
  createConnectionLimits,
  createRequestGuard,
  drainUnreadBody,
  HttpError,
  readRequestBody,
} from "@pleach/sandbox/internal/http";

/** Options of {@link startMcpHttpServer}. */
export interface StartMcpHttpServerOptions {
  /** Makes the MCP server that answers a request. */
  factory: McpServerFactory;
  /** The bearer token every request must carry: at least 16 characters, no whitespace. */
  token: string;
  /**
   * The address to bind.
   * @default "127.0.0.1"
   */
  host?: string;
  /**
   * The port; 0 picks a free one.
   * @default 0
   */
  port?: number;
  /**
   * Hosts accepted in a request's `Host` and `Origin` headers beside loopback (`localhost`,
   * `127.0.0.0/8`, `[::1]`) and the address the server listens on (every address of this machine
   * for `0.0.0.0` or `::`): names or addresses, any port, `.example.com` for a domain and every
   * name under it. Any other `Host` or `Origin` is refused with 403 before the token is checked,
   * as the MCP specification asks of Streamable HTTP servers (DNS rebinding protection).
   * @default []
   */
  allowedHosts?: readonly string[];
  /**
   * The path MCP is served on.
   * @default "/mcp"
   */
  path?: string;
  /**
   * Limits on connections, as for the sandbox server: header and request timeouts, the most
   * connections open at once (then 503 with `Retry-After`), and on connections that have made no
   * authorised request yet (408 and closed past a count or a deadline). An event stream (a `GET`
   * SSE answer) is not cut by the request timeout. See `ConnectionLimitsOptions` for the defaults.
   * @default {}
   */
  connectionLimits?: ConnectionLimitsOptions;
  /** Reports errors that do not reach a client. */
  onerror?: (error: Error) => void;
}

/** A running MCP HTTP server. */
export interface McpHttpServer {
  /** The endpoint clients connect to, e.g. `http://127.0.0.1:8931/mcp`. */
  readonly url: URL;
  close(): Promise<void>;
}

/** The largest request body read, like the MCP SDK's own default. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Serve MCP over Streamable HTTP (the v2 SDK's `createMcpHandler`, both protocol eras) on
 * `host:port`. A request whose `Host` or `Origin` is not accepted (see `allowedHosts`) gets 403
 * first; then every request must carry `Authorization: Bearer <token>`, compared in constant
 * time; anything else gets 401 before an MCP server is made.
 */
export async function startMcpHttpServer({
  factory,
  token,
  host = "127.0.0.1",
  port = 0,
  allowedHosts = [],
  path = "/mcp",
  connectionLimits = {},
  onerror,
}: StartMcpHttpServerOptions): Promise<McpHttpServer> {
  // The limits' own answers (400, 408, 431, 503) are JSON-RPC errors, as MCP clients read them.
  const limits = createConnectionLimits({
    answer: ({ message, reason }) => jsonRpcError(message, { reason }),
    ...connectionLimits,
  });
  const server = createServer({ ...limits.serverOptions });
  const guard = createRequestGuard({ token, server, host, allowedHosts, realm: "pleach" });
  const handler = createMcpHandler(factory, onerror === undefined ? {} : { onerror });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const refusal = guard(request);
    if (refusal !== undefined) {
      // `data` says what to change (for a 403: the header refused and the flag that accepts it).
      const answer = jsonRpcError(refusal.message, refusal.details);
      response.writeHead(refusal.status, {
        ...refusal.headers,
        "content-type": "application/json",
      });
      response.end(answer);
      return;
    }
    // A connection the limits closed meanwhile (408) gets nothing more.
    if (!limits.authorized(request.socket)) return;
    const url = new URL(request.url ?? "/", `http://${request.headers.host ?? "localhost"}`);
    if (url.pathname !== path) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(jsonRpcError(`no route ${url.pathname}: MCP is served on ${path}`));
      return;
    }
    const abort = new AbortController();
    response.on("close", () => abort.abort());
    void forward({ request, url, signal: abort.signal, handler })
      .then(async (answer) => {
        const headers: Record<string, string> = {};
        answer.headers.forEach((value, key) => {
          headers[key] = value;
        });
        response.writeHead(answer.status, headers);
        if (answer.body === null) {
          response.end();
          return;
        }
        for await (const chunk of answer.body) {
          if (!response.write(chunk))
            await new Promise((resolve) => response.once("drain", resolve));
        }
        response.end();
      })
      .catch(async (error: unknown) => {
        if (error instanceof HttpError) {
          // A body over the limit: answered once the client has sent it (for a moment at most),
          // and its connection not reused.
          await drainUnreadBody(request);
          const body = jsonRpcError(error.message);
          if (!response.headersSent) {
            response.writeHead(error.status, {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
              connection: "close",
            });
          }
          response.end(body);
          return;
        }
        onerror?.(error instanceof Error ? error : new Error(String(error)));
        if (!response.headersSent) response.writeHead(500);
        response.end();
      });
  });
  limits.attach(server);
  await listen({ server, host, port });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: new URL(`http://${shownHost}:${address.port}${path}`),
    async close() {
      limits.close();
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A JSON-RPC error body with no request id, as MCP clients read a refusal. */
function jsonRpcError(message: string, data?: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: null,
    error: { code: -32000, message, ...(data === undefined ? {} : { data }) },
  });
}

async function forward({
  request,
  url,
  signal,
  handler,
}: {
  request: IncomingMessage;
  url: URL;
  signal: AbortSignal;
  handler: ReturnType<typeof createMcpHandler>;
}): Promise<Response> {
  const headers = new Headers();
  for (const [key, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(key, item);
  }
  const method = request.method ?? "GET";
  const body =
    method === "GET" || method === "HEAD"
      ? undefined
      : await readRequestBody(request, { maxBytes: MAX_BODY_BYTES });
  return handler.fetch(new Request(url, { method, headers, body, signal }));
}

function listen({
  server,
  host,
  port,
}: {
  server: HttpServer;
  host: string;
  port: number;
}): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
