import {
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
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
 * holder set last. A request of the 2026 protocol revision carries its own level in `_meta`.
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
      const requested = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[
        LOG_LEVEL_META_KEY
      ];
      const threshold = isLevel(requested) ? requested : (asked ?? DEFAULT_LEVEL);
      if (LEVELS.indexOf(level) < LEVELS.indexOf(threshold)) return;
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
