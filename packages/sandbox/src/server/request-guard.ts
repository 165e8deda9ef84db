import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { ToolError } from "@pleach/core";
import {
  createRequestOriginCheck,
  parseAllowedHost,
  type RequestOriginCheck,
} from "./request-origin.js";

/** Options of {@link createRequestGuard}. */
export interface RequestGuardOptions {
  /**
   * The bearer token every request must carry (`Authorization: Bearer TOKEN`): at least 16
   * characters, no whitespace.
   */
  token: string;
  /** The server guarded: the address it is bound to is accepted in `Host` and `Origin`. */
  server: http.Server;
  /** The host the server was told to listen on (none on a Unix socket): accepted too. */
  host?: string;
  /**
   * Hosts accepted beside loopback and the listening address (see `createRequestOriginCheck`).
   * Checked here: a bad entry throws a `ToolError` `INVALID_INPUT` before the server listens.
   * @default []
   */
  allowedHosts?: readonly string[];
  /** The realm named in the `WWW-Authenticate` header of a 401. */
  realm: string;
  /**
   * Headers that may carry the token itself instead of `Authorization: Bearer` (the E2B SDK's
   * `X-API-KEY` and `X-Access-Token`), checked the same way; lower case.
   * @default []
   */
  tokenHeaders?: readonly string[];
  /**
   * The command-line flag that adds a host, named in refusals.
   * @default "--allow-host"
   */
  flag?: string;
}

/** Why a request was refused; the server answers it in its own body format. */
export interface RequestRefusal {
  /** 403: a `Host` or `Origin` not accepted; 401: a missing or wrong token. */
  status: 401 | 403;
  /** What was wrong and what to send instead. */
  message: string;
  /** For a 403: the header refused, its value, and the flag that would accept it. */
  details?: { refused: "Host" | "Origin"; value: string | null; allowWith?: string };
  /** Headers of the answer (`WWW-Authenticate` for a 401). */
  headers: Record<string, string>;
}

/** Checks a request; `undefined` when it may be served. */
export type RequestGuard = (request: http.IncomingMessage) => RequestRefusal | undefined;

/**
 * The guard in front of both HTTP servers (`pleach sandbox serve` and `pleach mcp --http`), run
 * before anything else is done for a request: first its `Host` and `Origin` (DNS rebinding
 * protection, 403), then its bearer token (401). The token is compared as a SHA-256 digest with
 * `timingSafeEqual`, so the comparison takes the same time whatever was sent, and leaks neither
 * the token's content nor its length.
 */
export function createRequestGuard({
  token,
  server,
  host,
  allowedHosts = [],
  realm,
  tokenHeaders = [],
  flag = "--allow-host",
}: RequestGuardOptions): RequestGuard {
  if (typeof token !== "string" || token.length < 16 || /\s/.test(token)) {
    throw new ToolError(
      "INVALID_INPUT",
      "the server token must be at least 16 characters without whitespace (e.g. openssl rand -hex 32)",
    );
  }
  for (const entry of allowedHosts) parseAllowedHost(entry);
  const expected = digest(token);
  // Made at the first request, when the server is bound: no request comes before.
  let checkOrigin: RequestOriginCheck | undefined;
  const unauthorized: RequestRefusal = {
    status: 401,
    message: `missing or wrong bearer token: send Authorization: Bearer TOKEN${tokenHeaders.map((name) => ` or ${name}: TOKEN`).join("")}`,
    headers: { "www-authenticate": `Bearer realm="${realm}"` },
  };
  return (request) => {
    if (checkOrigin === undefined) {
      const bound = server.address();
      checkOrigin = createRequestOriginCheck({
        allowedHosts,
        listenAddresses: [
          host,
          typeof bound === "object" && bound !== null ? bound.address : undefined,
        ],
        flag,
      });
    }
    const refusal = checkOrigin(request.headers);
    if (refusal !== undefined) {
      return {
        status: 403,
        message: refusal.message,
        details: {
          refused: refusal.header,
          value: refusal.value ?? null,
          ...(refusal.allowWith === undefined ? {} : { allowWith: refusal.allowWith }),
        },
        headers: {},
      };
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "");
    const given =
      match?.[1] ??
      tokenHeaders.map((name) => request.headers[name]).find((value) => typeof value === "string");
    const matches =
      timingSafeEqual(digest(typeof given === "string" ? given : ""), expected) &&
      given !== undefined;
    return matches ? undefined : unauthorized;
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
