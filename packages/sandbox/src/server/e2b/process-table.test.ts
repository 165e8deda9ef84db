import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import type { JobInfo, SandboxJobs } from "@pleach/core/sandbox";
import { describe, expect, it } from "vitest";
import type { HostedSandbox } from "../sandbox-registry.js";
import { createProcessService } from "./envd-process.js";
import { Process } from "./gen/process/process_pb.js";
import { createProcessTable, MAX_PROCESSES } from "./process-table.js";

const config = (cmd: string) => ({ cmd, args: [], envs: {}, cwd: undefined });

describe("an E2B sandbox's process table", () => {
  it("holds at most its limit: ended processes go first, oldest first, then it refuses", () => {
    const table = createProcessTable(3);
    const [a, b, c] = ["a", "b", "c"].map((tag) =>
      table.add({ tag, config: config(tag), jobId: undefined, controller: undefined }),
    );
    expect(table.full()).toBe(true);
    const refuse = () =>
      table.add({ tag: "d", config: config("d"), jobId: undefined, controller: undefined });
    expect(refuse).toThrow(ConnectError);
    expect(refuse).toThrow(/already runs 3 processes/);
    try {
      refuse();
    } catch (error) {
      expect((error as ConnectError).code).toBe(Code.ResourceExhausted);
      expect((error as ConnectError).metadata.get("pleach-code")).toBe("TOO_MANY_JOBS");
    }
    table.end(c as never);
    table.end(a as never);
    const d = refuse();
    expect(table.size()).toBe(3);
    // The oldest ended one made room; the other ended one is still there, running ones untouched.
    expect(table.find({ case: "tag", value: "a" })).toBeUndefined();
    expect(table.find({ case: "tag", value: "c" })).toBe(c);
    expect(table.running()).toEqual([b, d]);
    expect(MAX_PROCESSES).toBeGreaterThan(0);
  });

  it("keeps a bounded copy of a config while the process runs, and none after", () => {
    const table = createProcessTable();
    const huge = "x".repeat(1024 * 1024);
    const entry = table.add({
      tag: undefined,
      config: {
        cmd: huge,
        args: Array.from({ length: 10_000 }, () => huge.slice(0, 1000)),
        envs: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`V${i}`, huge])),
        cwd: huge,
      },
      jobId: undefined,
      controller: undefined,
    });
    const kept = JSON.stringify(entry.config).length;
    expect(kept).toBeLessThan(64 * 1024);
    expect(entry.config.cmd).toBe(huge.slice(0, 4096));
    expect(entry.config.args.length).toBeGreaterThan(0);
    expect(Object.keys(entry.config.envs).length).toBeGreaterThan(0);
    table.end(entry);
    expect(entry.ended).toBe(true);
    expect(entry.config).toEqual({ cmd: "", args: [], envs: {}, cwd: undefined });
  });
});

/** A session's jobs in memory: each job runs until `finish` ends it. */
function fakeJobs() {
  const jobs = new Map<string, JobInfo>();
  const killed: string[] = [];
  let next = 0;
  const api: SandboxJobs = {
    async start(command) {
      next += 1;
      const job: JobInfo = {
        jobId: `job-${next}`,
        command,
        state: "running",
        exitCode: null,
        startedAt: Date.now(),
        outputBytes: 0,
        droppedBytes: 0,
        pty: false,
      };
      jobs.set(job.jobId, job);
      return { ...job };
    },
    async output(jobId, options) {
      const job = jobs.get(jobId) as JobInfo;
      if (job.state === "running")
        await new Promise((resolve) => setTimeout(resolve, options?.waitMs ?? 10));
      return { output: "", since: 0, next: 0, skippedBytes: 0, job: { ...job } };
    },
    async input() {},
    async kill(jobId) {
      killed.push(jobId);
      const job = jobs.get(jobId) as JobInfo;
      job.state = "killed";
      return { ...job };
    },
    async list() {
      return [...jobs.values()].map((job) => ({ ...job }));
    },
  };
  const finish = (jobId: string) => {
    const job = jobs.get(jobId) as JobInfo;
    job.state = "exited";
    job.exitCode = 0;
  };
  return { api, finish, killed, jobs };
}

describe("envd's process service over a full table", () => {
  const setup = (limit: number) => {
    const jobs = fakeJobs();
    const table = createProcessTable(limit);
    const sandbox = { client: { jobs: jobs.api }, running: new Set() } as unknown as HostedSandbox;
    const transport = createRouterTransport(({ service }) => {
      service(
        Process,
        createProcessService({
          sandboxOf: () => sandbox,
          tableOf: () => table,
          envOf: () => ({}),
          heartbeatMs: 20,
          track: () => undefined,
        }),
      );
    });
    const client = createClient(Process, transport);
    /** Start a job with stdin, read its start event, and leave its stream. */
    const startAndLeave = async (cmd: string) => {
      const controller = new AbortController();
      const stream = client.start(
        { process: { cmd, args: [], envs: {} }, stdin: true },
        { signal: controller.signal },
      );
      for await (const message of stream) {
        expect(message.event?.event.case).toBe("start");
        break;
      }
      controller.abort();
    };
    return { jobs, table, client, startAndLeave };
  };

  it("forgets jobs that ended with no stream reading them, to make room", async () => {
    const { jobs, table, client, startAndLeave } = setup(3);
    for (const cmd of ["a", "b", "c"]) await startAndLeave(cmd);
    expect(table.running()).toHaveLength(3);
    for (const jobId of jobs.jobs.keys()) jobs.finish(jobId);
    // A fourth start finds room, and listing shows only it.
    await startAndLeave("d");
    expect(table.size()).toBeLessThanOrEqual(3);
    expect(table.running().map((entry) => entry.config.cmd)).toEqual(["d"]);
    expect((await client.list({})).processes.map((process) => process.config?.cmd)).toEqual(["d"]);
  });

  it("refuses a start past the limit with ResourceExhausted and leaves no job running", async () => {
    const { jobs, table, startAndLeave } = setup(2);
    await startAndLeave("a");
    await startAndLeave("b");
    await expect(startAndLeave("c")).rejects.toMatchObject({
      code: Code.ResourceExhausted,
      rawMessage: expect.stringMatching(/already runs 2 processes.*kill them/),
    });
    expect(table.size()).toBe(2);
    expect(jobs.killed).toEqual(["job-3"]);
  });
});
