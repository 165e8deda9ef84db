import type http from "node:http";
import {
  type ConnectRouter,
  createContextKey,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { answerOf, HttpError } from "../http-errors.js";
import type { SandboxTemplate } from "../protocol.js";
import type { Routes } from "../routes.js";
import type { HostedSandbox, SandboxRegistry } from "../sandbox-registry.js";
import { serveE2BApi } from "./e2b-api.js";
import { createE2BSandboxes } from "./e2b-sandboxes.js";
import { serveEnvdFiles } from "./envd-files.js";
import { createFilesystemService } from "./envd-filesystem.js";
import { createProcessService } from "./envd-process.js";
import { Filesystem } from "./gen/filesystem/filesystem_pb.js";
import { Process } from "./gen/process/process_pb.js";

/** Options of {@link createE2BRoutes}. */
export interface E2BRoutesOptions {
  registry: SandboxRegistry;
  maxRequestBytes: number;
  heartbeatMs: number;
  token: string;
  /**
   * E2B template names and the pleach templates they make; other names are folders of the
   * template root, when the server has one.
   * @default { base: "empty" }
   */
  templates?: Record<string, SandboxTemplate>;
  templateRoot: boolean;
}

const SANDBOX = createContextKey<HostedSandbox | undefined>(undefined, {
  description: "the sandbox of an envd call",
});

/**
 * The routes of the E2B face, on the server's one port: a request with an `E2b-Sandbox-Id` header
 * is for that sandbox's envd (its process and filesystem RPC, `/files`, `/health`); any other is
 * for the E2B API. Errors are answered in E2B's form, `{ code, message }`.
 */
export function createE2BRoutes({
  registry,
  maxRequestBytes,
  heartbeatMs,
  token,
  templates = { base: "empty" },
  templateRoot,
}: E2BRoutesOptions): Routes & { stop(): void } {
  const sandboxes = createE2BSandboxes({ registry, templates, templateRoot });
  const executing = new Set<Promise<void>>();
  const forRequest = new WeakMap<http.IncomingMessage, HostedSandbox>();
  const sandboxOf = (context: HandlerContext): HostedSandbox => {
    const sandbox = context.values.get(SANDBOX);
    if (sandbox === undefined) throw new Error("an envd call without its sandbox");
    return sandbox;
  };
  const routes = (router: ConnectRouter) => {
    router.service(
      Process,
      createProcessService({
        sandboxOf,
        tableOf: (sandbox) => sandboxes.get(sandbox.id).processes,
        envOf: (sandbox) => sandboxes.get(sandbox.id).envVars,
        heartbeatMs,
        track(running) {
          executing.add(running);
          void running.finally(() => executing.delete(running));
        },
      }),
    );
    router.service(Filesystem, createFilesystemService({ sandboxOf }));
  };
  const envd = connectNodeAdapter({
    routes,
    readMaxBytes: maxRequestBytes,
    contextValues: (request) =>
      createContextValues().set(SANDBOX, forRequest.get(request as http.IncomingMessage)),
    fallback: (_request, response) => {
      const body = JSON.stringify({ code: 404, message: "no such envd route on this server" });
      response.writeHead(404, { "content-type": "application/json" });
      response.end(body);
    },
  });

  const handle = async (request: http.IncomingMessage, response: http.ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://sandbox.invalid");
    const sandboxId = request.headers["e2b-sandbox-id"];
    if (typeof sandboxId !== "string") {
      await serveE2BApi({ sandboxes, registry, maxRequestBytes, token }, url, request, response);
      return;
    }
    const sandbox = sandboxes.hosted(sandboxId);
    if (url.pathname === "/health") {
      response.writeHead(204).end();
      return;
    }
    if (url.pathname === "/files") {
      await serveEnvdFiles({ sandbox, url, request, response, maxRequestBytes });
      return;
    }
    forRequest.set(request, sandbox);
    await new Promise<void>((resolve) => {
      response.once("close", resolve);
      envd(request, response);
    });
  };

  return {
    handle,
    async commandsDone() {
      await Promise.all(executing);
    },
    errorBody(error: unknown) {
      const { status, wire } = answerOf(error);
      // A sandbox the registry no longer has is E2B's 404, whatever the route.
      const gone = error instanceof HttpError && status === 410;
      return {
        status: gone ? 404 : status,
        body: { code: gone ? 404 : status, message: wire.message, pleachCode: wire.code },
      };
    },
    stop: () => sandboxes.stop(),
  };
}
