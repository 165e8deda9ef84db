/**
 * `@pleach/sandbox/internal/http`: the HTTP plumbing the sandbox server shares with pleach's CLI
 * (its MCP HTTP server): bounded request bodies, connection limits, the request guard and origin
 * check, the error that carries a status. Internal: it follows pleach's own needs, with no promise
 * of stability to anyone else; the package's main entry does not export it.
 */
export type {
  ConnectionLimits,
  ConnectionLimitsOptions,
  ConnectionRefusal,
} from "../server/connection-limits.js";
export { createConnectionLimits } from "../server/connection-limits.js";
export { HttpError } from "../server/http-errors.js";
export type { ReadRequestBodyOptions } from "../server/read-body.js";
export { drainUnreadBody, readRequestBody } from "../server/read-body.js";
export type { RequestGuard, RequestGuardOptions, RequestRefusal } from "../server/request-guard.js";
export { createRequestGuard } from "../server/request-guard.js";
export type {
  RequestOriginCheck,
  RequestOriginCheckOptions,
  RequestOriginRefusal,
} from "../server/request-origin.js";
export { createRequestOriginCheck } from "../server/request-origin.js";
