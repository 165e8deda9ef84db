// Background jobs over the sandbox server's protocol: the jobs routes and the HTTP client's
// `jobs`, against a real server whose sandboxes keep a session (PROTOCOL.md, "Jobs").
import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import {
  isSandboxUnavailable,
  type SandboxClient,
  type SandboxJobs,
  sandboxJobsOf,
} from "@pleach/core/sandbox";
import {
  cleanUpAfter,
  describeSandboxJobsContract,
  makeTempDir,
  useTempDir,
} from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpSandboxJobs } from "./http-jobs.js";
import {
  createHttpStreamSandboxProvider,
  type HttpSandboxSession,
  type HttpStreamSandboxProvider,
} from "./http-provider.js";
import { createSandboxServer, type SandboxServer } from "./server/sandbox-server.js";
import {
  fetchCommand,
  LISTENING,
  processesWith,
  serverJobCommand,
} from "./test-support/loopback-job.js";

const TOKEN = "jobs-token-0123456789abcdef";
const auth = () => ({ headers: { Authorization: `Bearer ${TOKEN}` } });
const bearer = { authorization: `Bearer ${TOKEN}` };
/** The server holds a job output request this long at most: a longer wait takes several. */
const MAX_JOB_WAIT_MS = 200;
const MAX_REQUEST_BYTES = 64 * 1024;
/** The limits of each sandbox's session: those the jobs contract checks. */
const SESSION = { maxJobs: 3, maxJobOutputBytes: 64 * 1024 };

let server: SandboxServer;
let provider: HttpStreamSandboxProvider;
let serverRoot: string;
/** The folder the next sandbox gets (outside the server's root, so the server leaves it). */
let nextWorkspace: string | undefined;
let removeRoot: () => Promise<void>;

beforeAll(async () => {
  const folder = await makeTempDir("pleach-jobs-server-");
  serverRoot = folder.dir;
  removeRoot = folder.cleanup;
  server = await createSandboxServer({
    root: serverRoot,
    token: TOKEN,
    workspacePath: (id) => nextWorkspace ?? path.join(serverRoot, id),
    maxJobWaitMs: MAX_JOB_WAIT_MS,
    maxRequestBytes: MAX_REQUEST_BYTES,
    session: SESSION,
  });
  provider = createHttpStreamSandboxProvider({ baseURL: server.url, auth });
});

afterAll(async () => {
  provider.close();
  await server.close();
  await removeRoot();
});

const sessionOf = new WeakMap<SandboxClient, HttpSandboxSession>();
describeSandboxJobsContract("HTTP stream (loopback sandbox server)", {
  async makeClient(root, limits) {
    expect(limits).toEqual(SESSION);
    nextWorkspace = root;
    try {
      const session = await provider.acquire();
      sessionOf.set(session.client, session);
      return session.client;
    } finally {
      nextWorkspace = undefined;
    }
  },
  close: async (client) => sessionOf.get(client)?.release(),
});

/** A sandbox of the server, released when the test ends, and its jobs. */
async function acquire(workspace?: string): Promise<{
  session: HttpSandboxSession;
  jobs: SandboxJobs;
}> {
  nextWorkspace = workspace;
  try {
    const session = cleanUpAfter(await provider.acquire(), (acquired) => acquired.release());
    const jobs = sandboxJobsOf(session.client);
    if (jobs === undefined) throw new Error("the server's sandbox offers no jobs");
    return { session, jobs };
  } finally {
    nextWorkspace = undefined;
  }
}

/** A raw request, for answers the client turns into errors. */
function raw(
  method: string,
  route: string,
  body?: string,
): Promise<{ status: number; error?: { code: string; message: string } }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      new URL(route, server.url),
      { method, headers: { ...bearer, "content-type": "application/json" } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const parsed = text === "" ? {} : JSON.parse(text);
          resolve({ status: response.statusCode ?? 0, error: parsed.error });
        });
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

describe("jobs over the sandbox server", () => {
  it("serves a job's server to a foreground command on loopback, not the host's; kill and release leave nothing", async () => {
    const workspace = await useTempDir("pleach-jobs-workspace-");
    const { session, jobs } = await acquire(workspace);
    const marker = `pleach-job-${randomBytes(6).toString("hex")}`;
    // A server on the host's loopback, which the sandbox must not reach.
    const outside = cleanUpAfter(
      await new Promise<http.Server>((resolve) => {
        const listening = http.createServer((_request, response) => response.end("host"));
        listening.listen(0, "127.0.0.1", () => resolve(listening));
      }),
      (listening) => new Promise((resolve) => listening.close(resolve)),
    );

    const started = await jobs.start(serverJobCommand(marker));
    expect(started).toMatchObject({ state: "running", pty: false, exitCode: null });
    const ready = await jobs.output(started.jobId, { until: LISTENING, waitMs: 30_000 });
    expect(ready.matched).toBe(true);
    const port = new RegExp(LISTENING).exec(ready.output)?.[1] ?? "";
    expect(processesWith(marker)).not.toEqual([]);

    expect((await session.client.exec(fetchCommand(port))).stdout).toBe("got hello from the job\n");
    const hostPort = (outside.address() as AddressInfo).port;
    expect((await session.client.exec(fetchCommand(hostPort))).stdout).toBe(
      "closed ECONNREFUSED\n",
    );

    const killed = await jobs.kill(started.jobId);
    expect(killed.state).toBe("killed");
    expect((await session.client.exec(fetchCommand(port))).stdout).toBe("closed ECONNREFUSED\n");
    expect(processesWith(marker)).toEqual([]);
    expect((await jobs.list()).map((job) => [job.jobId, job.state])).toEqual([
      [started.jobId, "killed"],
    ]);

    // Release ends a job still running and removes the outputs kept for the session.
    const survivor = `pleach-job-${randomBytes(6).toString("hex")}`;
    const sleeper = await jobs.start(`bash -c "echo up; sleep 600; :" ${survivor}`);
    // Its command line is the job's once it has printed (the job was launched before).
    await jobs.output(sleeper.jobId, { until: "up", waitMs: 30_000 });
    const long = await session.client.exec("seq 1 20000", { fullOutputOverBytes: 1000 });
    expect(long.fullOutput).toMatchObject({ bytes: long.stdout.length });
    const keptPath = long.fullOutput?.path ?? "";
    expect(keptPath).toMatch(/^\/run\/pleach-output\/cmd-\d+\.log$/);
    expect(await session.client.readFile(keptPath)).toBe(long.stdout);
    expect((await session.client.exec(`cat ${keptPath}`)).stdout).toBe(long.stdout);
    // Read through the file route, never written there; no other absolute path gets through.
    await expect(session.client.writeFile(keptPath, "x")).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    for (const other of ["/run/pleach-output/../../etc/passwd", "/etc/passwd", "/run/x"]) {
      await expect(session.client.readFile(other)).rejects.toMatchObject({ code: "PATH_ESCAPE" });
    }
    expect((await session.client.exec("ls -A")).stdout).not.toContain("pleach-output");
    expect(processesWith(survivor)).not.toEqual([]);
    await session.release();
    expect(processesWith(survivor)).toEqual([]);
    // No file is left in the workspace.
    const left = await readdir(workspace, { recursive: true, withFileTypes: true });
    expect(left.filter((entry) => !entry.isDirectory())).toEqual([]);
    await expect(jobs.list()).rejects.toSatisfy(isSandboxUnavailable);
  }, 60_000);

  it("splits a wait longer than the server holds a request into several, from the same cursor", async () => {
    const { jobs } = await acquire();
    const { jobId } = await jobs.start("sleep 1; echo first; sleep 1; echo ready");
    // Each request is held 200 ms at most: one request would come back without the match.
    const matched = await jobs.output(jobId, { until: "ready", waitMs: 30_000 });
    expect(matched).toMatchObject({ since: 0, matched: true, output: "first\nready\n" });
    const { jobId: quiet } = await jobs.start("sleep 1; echo late");
    expect(await jobs.output(quiet, { waitMs: 30_000 })).toMatchObject({ output: "late\n" });
    // A read cut by maxBytes comes back at once, and the next read goes on from its cursor.
    const first = await jobs.output(jobId, {
      maxBytes: 6,
      until: "nothing like it",
      waitMs: 30_000,
    });
    expect(first).toMatchObject({ output: "first\n", next: 6, matched: false });
    const rest = await jobs.output(jobId, { since: first.next, waitMs: 30_000 });
    expect(rest).toMatchObject({ output: "ready\n", next: 12 });
    expect(rest.job).toMatchObject({ state: "exited", exitCode: 0, outputBytes: 12 });
  }, 60_000);

  it("answers a job's input, and refuses with the local client's codes and statuses", async () => {
    const { session, jobs } = await acquire();
    const { jobId } = await jobs.start('read -r line; echo "got $line"');
    await jobs.input(jobId, "hello\n");
    const answered = await jobs.output(jobId, { until: "got hello", waitMs: 30_000 });
    expect(answered.matched).toBe(true);
    await jobs.output(jobId, { since: answered.next, waitMs: 30_000 });
    await expect(jobs.input(jobId, "again\n")).rejects.toMatchObject({ code: "CONFLICT" });
    await expect(jobs.output("no-such-job")).rejects.toMatchObject({ code: "NOT_FOUND" });

    const base = `/v1/sandboxes/${session.id}/jobs`;
    const cases: Array<[string, string, string | undefined, number, string, RegExp]> = [
      ["POST", `${base}/${jobId}/input`, '{"text":"late\\n"}', 409, "CONFLICT", /./],
      ["GET", `${base}/no-such-job/output`, undefined, 404, "NOT_FOUND", /./],
      ["POST", `${base}/no-such-job/kill`, undefined, 404, "NOT_FOUND", /./],
      ["GET", `${base}/${jobId}/output?since=-1`, undefined, 400, "INVALID_INPUT", /since must/],
      ["GET", `${base}/${jobId}/output?wait=1`, undefined, 400, "INVALID_INPUT", /waitMs=N/],
      ["GET", `${base}/${jobId}/output?until`, undefined, 400, "INVALID_INPUT", /no value/],
      ["POST", base, '{"command":"true","shell":"zsh"}', 400, "INVALID_INPUT", /"command"/],
      ["POST", base, "not json", 400, "INVALID_INPUT", /not valid JSON/],
      ["POST", `${base}/${jobId}/kill`, '{"now":true}', 400, "INVALID_INPUT", /no body/],
      ["DELETE", base, undefined, 405, "UNSUPPORTED", /GET, POST/],
      ["POST", `${base}/${jobId}/output`, undefined, 405, "UNSUPPORTED", /only GET/],
      ["GET", `${base}/${jobId}`, undefined, 404, "UNSUPPORTED", /no route/],
      ["GET", `/v1/sandboxes/${"0".repeat(32)}/jobs`, undefined, 410, "NOT_FOUND", /released/],
      [
        "POST",
        base,
        JSON.stringify({ command: "x".repeat(MAX_REQUEST_BYTES) }),
        413,
        "TOO_LARGE",
        /--max-request-bytes/,
      ],
    ];
    for (const [method, route, body, status, code, message] of cases) {
      const answer = await raw(method, route, body);
      expect([method, route.slice(0, 80), answer.status, answer.error?.code]).toEqual([
        method,
        route.slice(0, 80),
        status,
        code,
      ]);
      expect(answer.error?.message).toMatch(message);
    }
  }, 60_000);

  it("refuses a job past the session's limit with TOO_MANY_JOBS (429)", async () => {
    const { session, jobs } = await acquire();
    const started: string[] = [];
    let refused: unknown;
    for (let count = 0; count < 64 && refused === undefined; count += 1) {
      try {
        started.push((await jobs.start("sleep 600")).jobId);
      } catch (error) {
        refused = error;
      }
    }
    expect(refused).toMatchObject({ code: "TOO_MANY_JOBS" });
    const answer = await raw("POST", `/v1/sandboxes/${session.id}/jobs`, '{"command":"true"}');
    expect([answer.status, answer.error?.code]).toEqual([429, "TOO_MANY_JOBS"]);
    // An ended job makes room.
    await jobs.kill(started[0] ?? "");
    expect((await jobs.start("true")).state).toBeDefined();
  }, 60_000);

  it("ends a wait when aborted with what there is, and says a server that is gone is unavailable", async () => {
    const { jobs } = await acquire();
    const { jobId } = await jobs.start("echo early; sleep 600");
    await jobs.output(jobId, { until: "early", waitMs: 30_000 });
    const controller = new AbortController();
    const waiting = jobs.output(jobId, {
      since: 6,
      waitMs: 60_000,
      abortSignal: controller.signal,
    });
    setTimeout(() => controller.abort(), 300);
    expect(await waiting).toMatchObject({ output: "", since: 6, next: 6 });
    await expect(
      (jobs as HttpSandboxJobs).list({ abortSignal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ code: "ABORTED" });

    const folder = await useTempDir("pleach-jobs-gone-");
    const doomed = await createSandboxServer({ root: folder, token: TOKEN });
    const elsewhere = createHttpStreamSandboxProvider({ baseURL: doomed.url, auth });
    const session = await elsewhere.acquire();
    const gone = sandboxJobsOf(session.client);
    await doomed.close();
    await expect(gone?.list()).rejects.toSatisfy(isSandboxUnavailable);
    await expect(gone?.start("true")).rejects.toSatisfy(isSandboxUnavailable);
    elsewhere.close();
  }, 60_000);
});

describe("a server without jobs", () => {
  it("gives a client without jobs, so the job tools refuse before sending anything", async () => {
    // A server of the protocol from before jobs: its create answer names no `jobs`.
    const older = cleanUpAfter(
      await new Promise<http.Server>((resolve) => {
        const listening = http.createServer((_request, response) => {
          response.writeHead(201, { "content-type": "application/json" });
          response.end(JSON.stringify({ id: "a".repeat(32), root: "/srv/pleach/a" }));
        });
        listening.listen(0, "127.0.0.1", () => resolve(listening));
      }),
      (listening) => new Promise((resolve) => listening.close(resolve)),
    );
    const client = createHttpStreamSandboxProvider({
      baseURL: `http://127.0.0.1:${(older.address() as AddressInfo).port}/`,
    });
    const session = await client.acquire();
    expect(sandboxJobsOf(session.client)).toBeUndefined();
    client.close();
  });
});
