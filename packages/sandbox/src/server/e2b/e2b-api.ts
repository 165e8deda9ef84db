import type http from "node:http";
import { z } from "zod";
import { HttpError, sendJson } from "../http-errors.js";
import { MAX_REQUEST_BYTES_SETTING, readJsonBody } from "../read-body.js";
import type { SandboxRegistry } from "../sandbox-registry.js";
import { type E2BSandboxes, ENVD_VERSION } from "./e2b-sandboxes.js";

/** Body of `POST /sandboxes` and `POST /v2/sandboxes`: what is served, the rest refused by name. */
const createBodySchema = z.looseObject({
  templateID: z.string().min(1),
  metadata: z.record(z.string(), z.string()).optional(),
  envVars: z.record(z.string(), z.string()).optional(),
  timeout: z.number().int().positive().optional(),
});
const timeoutBodySchema = z.looseObject({ timeout: z.number().int().nonnegative() });
const connectBodySchema = z.looseObject({ timeout: z.number().int().nonnegative().optional() });

/** Create options of the E2B API this face does not serve, refused when set. */
const UNSERVED_CREATE_FIELDS = [
  "mcp",
  "network",
  "allow_internet_access",
  "volumeMounts",
  "autoPause",
  "autoResume",
  "secure",
  "iam",
];

const ROUTE = /^\/(?:v2\/)?sandboxes(?:\/([^/]+)(?:\/([a-z]+))?)?$/;

/** Options of {@link serveE2BApi}. */
export interface E2BApiOptions {
  sandboxes: E2BSandboxes;
  registry: SandboxRegistry;
  maxRequestBytes: number;
  /** The server's token, handed back as the sandboxes' envd access token. */
  token: string;
}

/**
 * The E2B API's sandbox routes, as the SDK's `Sandbox` calls them: create, connect, get, list,
 * kill and set timeout. Other routes (pause, snapshots, fork, metrics, network, templates,
 * volumes, secrets) answer 501 saying so.
 */
export async function serveE2BApi(
  { sandboxes, maxRequestBytes, token }: E2BApiOptions,
  url: URL,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const route = ROUTE.exec(url.pathname);
  const [, id, action] = route ?? [];
  const method = request.method ?? "GET";
  const body = <Schema extends z.ZodType>(schema: Schema, expected: string) =>
    readJsonBody(request, {
      schema,
      maxBytes: maxRequestBytes,
      setting: MAX_REQUEST_BYTES_SETTING,
      expected,
    });
  const v2 = url.pathname.startsWith("/v2/");
  if (route !== null && id === undefined && method === "POST") {
    const created = await body(
      createBodySchema,
      `{ "templateID": NAME, "metadata"?: {...}, "envVars"?: {...}, "timeout"?: SECONDS }`,
    );
    const unserved = UNSERVED_CREATE_FIELDS.filter(
      (field) => (created as Record<string, unknown>)[field] != null,
    );
    if (unserved.length > 0) {
      throw notServed(
        `the create options ${unserved.join(", ")}`,
        "the server's own flags (--network, --allow-domain, --mode) decide these for every sandbox; create without them",
      );
    }
    const record = await sandboxes.create({
      templateID: created.templateID,
      metadata: created.metadata ?? {},
      envVars: created.envVars ?? {},
      timeoutMs: (created.timeout ?? 300) * 1000,
    });
    sendJson(response, 201, {
      ...sandboxes.describe(record),
      clientID: "pleach",
      envdAccessToken: token,
    });
    return;
  }
  if (route !== null && id === undefined && method === "GET") {
    const wanted = metadataFilter(url.searchParams.get("metadata"));
    const states = (url.searchParams.get("state") ?? "running").split(",");
    const listed = states.includes("running")
      ? sandboxes
          .list()
          .filter((record) =>
            Object.entries(wanted).every(([key, value]) => record.metadata[key] === value),
          )
      : [];
    sendJson(
      response,
      200,
      listed.map((record) => ({ ...sandboxes.describe(record), clientID: "pleach" })),
    );
    return;
  }
  if (route !== null && id !== undefined) {
    const record = sandboxes.get(id);
    if (action === undefined && method === "GET") {
      sendJson(response, 200, { ...sandboxes.describe(record), clientID: "pleach" });
      return;
    }
    if (action === undefined && method === "DELETE") {
      await sandboxes.kill(record, "the sandbox was killed (Sandbox.kill)");
      response.writeHead(204).end();
      return;
    }
    if (action === "timeout" && method === "POST") {
      const { timeout } = await body(timeoutBodySchema, `{ "timeout": SECONDS }`);
      sandboxes.setTimeout(record, timeout * 1000);
      response.writeHead(204).end();
      return;
    }
    if (action === "connect" && v2 && method === "POST") {
      const { timeout } = await body(connectBodySchema, `{ "timeout"?: SECONDS }`);
      if (timeout !== undefined) sandboxes.extendTimeout(record, timeout * 1000);
      sendJson(response, 200, {
        ...sandboxes.describe(record),
        clientID: "pleach",
        envdAccessToken: token,
      });
      return;
    }
  }
  throw notServed(
    `${method} ${url.pathname}`,
    `this server serves creating, connecting, listing, getting, killing sandboxes and setting their timeout (envd ${ENVD_VERSION}); pausing, snapshots, forks, metrics, network updates, templates, volumes and secrets are not served`,
  );
}

/** A 501 naming what is not served and what to do instead. */
function notServed(what: string, instead: string): HttpError {
  return new HttpError(501, {
    code: "UNSUPPORTED",
    message: `${what}: not supported by pleach's E2B face; ${instead}`,
  });
}

/** The `metadata` query of a list (`key=value&...`, each part URL-encoded once more). */
function metadataFilter(query: string | null): Record<string, string> {
  if (query === null || query === "") return {};
  const decoded = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw new HttpError(400, {
        code: "INVALID_INPUT",
        message: `the metadata query ${JSON.stringify(query)} is not valid percent-encoding; send key=value pairs, each URL-encoded`,
      });
    }
  };
  return Object.fromEntries(
    [...new URLSearchParams(query)].map(([key, value]) => [decoded(key), decoded(value)]),
  );
}
