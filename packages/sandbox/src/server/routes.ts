import type http from "node:http";
import { serveFile } from "./file-route.js";
import { HttpError, methodNotAllowed, sendJson } from "./http-errors.js";
import { serveJobs } from "./job-routes.js";
import { createSandboxRequestSchema, execRequestSchema, PROTOCOL_PREFIX } from "./protocol.js";
import { MAX_REQUEST_BYTES_SETTING, readJsonBody } from "./read-body.js";
import type { SandboxRegistry } from "./sandbox-registry.js";
import { serveExec } from "./stream-exec.js";

/** Options of {@link createRoutes}. */
export interface RoutesOptions {
  registry: SandboxRegistry;
  maxSandboxes: number;
  /** The largest request body. */
  maxRequestBytes: number;
  heartbeatMs: number;
  /** The longest a job output request is held waiting. */
  maxJobWaitMs: number;
}

/** The protocol's routes, for a request that passed the server's checks. */
export interface Routes {
  /** Answer `request` (errors are thrown, for the server to answer). */
  handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void>;
  /** Settles once every command running now is over and its sandbox let go. */
  commandsDone(): Promise<void>;
  /**
   * The status and body an error is answered with, for a protocol whose errors have a form of
   * their own (E2B's `{ code, message }`); pleach's protocol answers `{ error: WIRE_ERROR }`.
   */
  errorBody?(error: unknown): { status: number; body: unknown };
  /** Stop the protocol's own timers, when the server closes. */
  stop?(): void;
}

const ROUTE = new RegExp(
  `^${PROTOCOL_PREFIX}/sandboxes(?:/([^/]+)(?:/(exec|file|jobs(?:/([^/]+)/(output|input|kill))?))?)?$`,
);

/** The bodies the JSON routes take, named in their 400s. */
const CREATE_BODY = `{ "template"?: "empty" | { "folder": NAME } | { "git": URL, "ref"?: REF } }`;
const EXEC_BODY = `{ "command": STRING, "cwd"?: STRING, "timeoutMs"?: NUMBER, "env"?: { NAME: STRING }, "stdin"?: STRING, "maxOutputBytes"?: NUMBER, "fullOutputOverBytes"?: NUMBER }`;

/** The routes of PROTOCOL.md: health, create, destroy, file, exec and jobs. */
export function createRoutes({
  registry,
  maxSandboxes,
  maxRequestBytes,
  heartbeatMs,
  maxJobWaitMs,
}: RoutesOptions): Routes {
  /** Commands running now, each settled once its process group is gone and its sandbox let go. */
  const executing = new Set<Promise<void>>();

  const handle = async (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://sandbox.invalid");
    if (url.pathname === `${PROTOCOL_PREFIX}/health` && request.method === "GET") {
      sendJson(response, 200, { ok: true, sandboxes: registry.size, maxSandboxes });
      return;
    }
    const route = ROUTE.exec(url.pathname);
    if (route === null) {
      throw new HttpError(404, {
        code: "UNSUPPORTED",
        message: `no route ${request.method} ${url.pathname}`,
      });
    }
    const [, id, action, jobId, jobAction] = route;
    if (id === undefined) {
      if (request.method !== "POST") throw methodNotAllowed(request.method, url.pathname, "POST");
      const { template } = await readJsonBody(request, {
        schema: createSandboxRequestSchema,
        maxBytes: maxRequestBytes,
        setting: MAX_REQUEST_BYTES_SETTING,
        expected: CREATE_BODY,
      });
      sendJson(response, 201, await registry.create(template));
      return;
    }
    if (action === undefined) {
      if (request.method !== "DELETE") {
        throw methodNotAllowed(request.method, url.pathname, "DELETE");
      }
      await registry.destroy(registry.lookup(id), "the sandbox was released");
      response.writeHead(204).end();
      return;
    }
    if (action === "file") {
      await serveFile({
        sandbox: () => registry.lookup(id),
        url,
        request,
        response,
        maxRequestBytes,
      });
      return;
    }
    if (action?.startsWith("jobs")) {
      await serveJobs({
        sandbox: () => registry.lookup(id),
        jobId,
        action: jobAction,
        url,
        request,
        response,
        maxRequestBytes,
        maxJobWaitMs,
      });
      return;
    }
    if (request.method !== "POST") throw methodNotAllowed(request.method, url.pathname, "POST");
    const sandbox = registry.lookup(id);
    const body = await readJsonBody(request, {
      schema: execRequestSchema,
      maxBytes: maxRequestBytes,
      setting: MAX_REQUEST_BYTES_SETTING,
      expected: EXEC_BODY,
    });
    const running = serveExec({ sandbox, body, request, response, heartbeatMs });
    executing.add(running);
    try {
      await running;
    } finally {
      executing.delete(running);
    }
  };

  return {
    handle,
    async commandsDone() {
      await Promise.all(executing);
    },
  };
}
