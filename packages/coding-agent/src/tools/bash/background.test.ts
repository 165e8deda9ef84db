import { renderToolResult } from "@pleach/core";
import { describe, expect, it, vi } from "vitest";
import {
  clientWithJobs,
  createFakeJobs,
  type FakeJobsOptions,
} from "../../test-support/fake-jobs.js";
import { createBashTool } from "./tool.js";

function setup(options: FakeJobsOptions = {}) {
  const fake = createFakeJobs(options);
  return { ...fake, bash: createBashTool(clientWithJobs(fake.jobs)) };
}

describe("bash with background: true", () => {
  it("returns as soon as the job prints its first output", async () => {
    const { bash, jobs, job } = setup();
    // Were it to wait the whole 30 s yieldMs, the test would time out.
    const starting = bash.execute({ command: "npm run dev", background: true, yieldMs: 30_000 });
    await vi.waitFor(() => job("1"));
    job("1").print("VITE ready\n");
    const output = await starting;
    expect(output).toMatchObject({
      output: "VITE ready\n",
      exitCode: null,
      timedOut: false,
      truncated: false,
      jobId: "1",
      state: "running",
      next: 11,
      skippedBytes: 0,
      more: false,
    });
    expect(bash.toModelOutput(output)).toMatchInlineSnapshot(`
      {
        "error": false,
        "output": "VITE ready
      [read what it prints next with job_output (jobId "1", since 11, waitMs to wait); job_input answers it, job_kill stops it]
      [job 1 running · next 11]",
      }
    `);
    expect((await jobs.list())[0]).toMatchObject({ command: "npm run dev", pty: false });
  });

  it("returns after yieldMs when the job prints nothing", async () => {
    const { bash } = setup();
    const output = await bash.execute({ command: "sleep 600", background: true, yieldMs: 10 });
    expect(output).toMatchObject({ output: "", state: "running", exitCode: null, next: 0 });
    expect(bash.toModelOutput(output).output).toBe(
      '[read what it prints next with job_output (jobId "1", since 0, waitMs to wait); job_input answers it, job_kill stops it]\n[job 1 running · next 0]',
    );
  });

  it("gives the exit status of a job that ended already, flagging a failure", async () => {
    const { bash } = setup({
      onStart(job) {
        job.print("missing script\n");
        job.exit(1);
      },
    });
    const output = await bash.execute({ command: "npm run nope", background: true });
    expect(output).toMatchObject({ state: "exited", exitCode: 1, output: "missing script\n" });
    expect(bash.toModelOutput(output)).toEqual({
      output: "missing script\n[job 1 exited 1 · next 15]",
      error: true,
    });
  });

  it("returns the first page of a long output and says more waits", async () => {
    const { bash } = setup({ onStart: (job) => job.print("x".repeat(60_000)) });
    const output = await bash.execute({ command: "cat big", background: true });
    expect(output).toMatchObject({ next: 49_000, more: true, truncated: true });
    expect(output.output).toHaveLength(49_000);
    const seen = renderToolResult({ ok: true, result: bash.toModelOutput(output) }).output;
    expect(seen.length).toBeLessThanOrEqual(50_000);
    expect(seen).toContain(
      '[more output is waiting: call job_output with jobId "1" and since 49000]',
    );
  });

  it("passes cwd and pty to the job", async () => {
    const { bash, jobs } = setup();
    await bash.execute({ command: "python3 -i", background: true, pty: true, yieldMs: 0 });
    expect((await jobs.list())[0]).toMatchObject({ pty: true });
  });

  it("refuses `timeout` with background, and `yieldMs` or `pty` without it", async () => {
    const { bash, jobs } = setup();
    await expect(
      bash.execute({ command: "x", background: true, timeout: 1_000 }),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("a background job has no time limit"),
    });
    for (const input of [{ yieldMs: 5 }, { pty: true }, { background: false, pty: true }]) {
      await expect(bash.execute({ command: "x", ...input })).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("applies to background jobs only"),
      });
    }
    await expect(
      bash.execute({ command: "x", background: true, yieldMs: 30_001 }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("yieldMs") });
    expect(await jobs.list()).toEqual([]);
  });

  it("kills the job it started when the call is aborted while it waits", async () => {
    const { bash, jobs } = setup();
    const controller = new AbortController();
    const starting = bash.execute(
      { command: "sleep 600", background: true, yieldMs: 30_000 },
      { abortSignal: controller.signal },
    );
    await vi.waitFor(async () => expect(await jobs.list()).toHaveLength(1));
    controller.abort();
    await expect(starting).rejects.toMatchObject({ code: "ABORTED" });
    expect((await jobs.list()).map((job) => job.state)).toEqual(["killed"]);
  });
});
