import type http from "node:http";
import { jobsUnsupportedError, type SandboxJobs, sandboxJobsOf } from "@pleach/core/sandbox";
import { badRequest, HttpError, methodNotAllowed, sendJson } from "./http-errors.js";
import {
  jobInputRequestSchema,
  jobKillRequestSchema,
  jobStartRequestSchema,
} from "./job-protocol.js";
import { strictQuery, wholeNumber } from "./query.js";
import { MAX_REQUEST_BYTES_SETTING, readJsonBody } from "./read-body.js";
import type { HostedSandbox } from "./sandbox-registry.js";
import { toWireError } from "./wire-errors.js";

/** Options of {@link serveJobs}. */
export interface ServeJobsOptions {
  /** The sandbox, looked up once the method is known. */
  sandbox: () => HostedSandbox;
  /** The job of the path (still URL-encoded), absent on `/jobs` itself. */
  jobId: string | undefined;
  /** What is asked of that job: `output`, `input` or `kill`. */
  action: string | undefined;
  url: URL;
  request: http.IncomingMessage;
  response: http.ServerResponse;
  /** The largest request body. */
  maxRequestBytes: number;
  /** The longest an output request is held waiting; a longer `waitMs` is cut to it. */
  maxJobWaitMs: number;
}

const START_BODY = `{ "command": STRING, "cwd"?: STRING, "env"?: { NAME: STRING }, "pty"?: BOOLEAN }`;
const INPUT_BODY = `{ "text": STRING }`;

/**
 * The jobs routes (see PROTOCOL.md): `POST /jobs` starts a job, `GET /jobs` lists them, `GET
 * /jobs/:jobId/output` reads a job's output (held up to `maxJobWaitMs` when asked to wait), `POST
 * /jobs/:jobId/input` writes to its stdin and `POST /jobs/:jobId/kill` kills it. Each answers
 * what the sandbox's local client's jobs return, and refuses with its codes.
 */
export async function serveJobs({
  sandbox,
  jobId,
  action,
  url,
  request,
  response,
  maxRequestBytes,
  maxJobWaitMs,
}: ServeJobsOptions): Promise<void> {
  const method = request.method;
  if (jobId === undefined) {
    if (method === "GET") {
      sendJson(response, 200, { jobs: await jobsOf(sandbox()).list() });
      return;
    }
    if (method !== "POST") throw methodNotAllowed(method, url.pathname, "GET, POST");
    const jobs = jobsOf(sandbox());
    const { command, ...options } = await readJsonBody(request, {
      schema: jobStartRequestSchema,
      maxBytes: maxRequestBytes,
      setting: MAX_REQUEST_BYTES_SETTING,
      expected: START_BODY,
    });
    sendJson(response, 201, await jobs.start(command, options));
    return;
  }
  const id = decodeJobId(jobId);
  if (action === "output") {
    if (method !== "GET") throw methodNotAllowed(method, url.pathname, "GET");
    const hosted = sandbox();
    const jobs = jobsOf(hosted);
    const query = strictQuery(url, {
      takes: { since: "since=N", waitMs: "waitMs=N", until: "until=REGEX", maxBytes: "maxBytes=N" },
      usage: "a job's output takes only since=N, waitMs=N, until=REGEX and maxBytes=N",
    });
    const waitMs = wholeNumber("waitMs", query.get("waitMs"), "milliseconds");
    // The wait ends early, answering what there is, when the client goes away or the sandbox is
    // destroyed (it counts as running meanwhile, so it is not idle).
    const waiting = new AbortController();
    const onGone = () => {
      if (!response.writableFinished) waiting.abort();
    };
    response.on("close", onGone);
    hosted.running.add(waiting);
    try {
      const output = await jobs.output(id, {
        since: wholeNumber("since", query.get("since"), "bytes"),
        waitMs: waitMs === undefined ? undefined : Math.min(waitMs, maxJobWaitMs),
        until: query.get("until"),
        maxBytes: wholeNumber("maxBytes", query.get("maxBytes"), "bytes"),
        abortSignal: waiting.signal,
      });
      sendJson(response, 200, output);
    } finally {
      response.off("close", onGone);
      hosted.running.delete(waiting);
      hosted.lastUsed = Date.now();
    }
    return;
  }
  if (method !== "POST") throw methodNotAllowed(method, url.pathname, "POST");
  const jobs = jobsOf(sandbox());
  if (action === "kill") {
    await readJsonBody(request, {
      schema: jobKillRequestSchema,
      maxBytes: maxRequestBytes,
      setting: MAX_REQUEST_BYTES_SETTING,
      expected: "no body, or {}",
    });
    sendJson(response, 200, await jobs.kill(id));
    return;
  }
  const { text } = await readJsonBody(request, {
    schema: jobInputRequestSchema,
    maxBytes: maxRequestBytes,
    setting: MAX_REQUEST_BYTES_SETTING,
    expected: INPUT_BODY,
  });
  await jobs.input(id, text);
  response.writeHead(204, { "cache-control": "no-store" }).end();
}

/** The sandbox's jobs, or `501 UNSUPPORTED` (the message of `jobsUnsupportedError`). */
function jobsOf(sandbox: HostedSandbox): SandboxJobs {
  const jobs = sandboxJobsOf(sandbox.client);
  if (jobs === undefined) throw new HttpError(501, toWireError(jobsUnsupportedError()));
  return jobs;
}

function decodeJobId(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest(
      `the job id ${JSON.stringify(text.slice(0, 100))} is not URL-encoded UTF-8 (a % escape is malformed)`,
    );
  }
}
