import {
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  PROTOCOL_VERSION_META_KEY,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";

/** The MCP log levels, least severe first. */
const LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** What is sent while no host asked for a level: server-side errors only. */
const DEFAULT_LEVEL: LoggingLevel = "error";

/**
 * MCP logging (`notifications/message`) for the servers of one factory. The level a host sets with
 * `logging/setLevel` holds for every server the factory makes: over stdio that is the one
 * connection; over HTTP, where each request gets its own server, it is the level the token's
 * holder set last. MCP 2026-07-28 deprecates both: a request of that revision carries its own level
 * in `_meta`, and gets no message at all without one (what a server has to say about itself goes
 * to stderr, see `logError` of the server).
 */
export interface McpLogging {
  /** Answer `logging/setLevel` on `server` (which must declare the `logging` capability). */
  handleSetLevel(server: Server): void;
  /** Send `data` at `level` to the client of the request `ctx`, if the level asked lets it through. */
  log(ctx: ServerContext, level: LoggingLevel, data: string): void;
}

export function createMcpLogging(): McpLogging {
  let asked: LoggingLevel | undefined;
  return {
    handleSetLevel(server) {
      server.setRequestHandler("logging/setLevel", (request) => {
        asked = request.params.level;
        return {};
      });
    },
    log(ctx, level, data) {
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      const requested = envelope?.[LOG_LEVEL_META_KEY];
      const stateless = envelope?.[PROTOCOL_VERSION_META_KEY] !== undefined;
      let threshold: LoggingLevel | undefined;
      if (isLevel(requested)) threshold = requested;
      else if (!stateless) threshold = asked ?? DEFAULT_LEVEL;
      if (threshold === undefined || LEVELS.indexOf(level) < LEVELS.indexOf(threshold)) return;
      // A client that went away misses the message; the call goes on.
      ctx.mcpReq
        .notify({ method: "notifications/message", params: { level, logger: "pleach", data } })
        .catch(() => {});
    },
  };
}

function isLevel(value: unknown): value is LoggingLevel {
  return LEVELS.includes(value as LoggingLevel);
}
