import { renderToolResult, ToolError } from "@pleach/core";
import { describe, expect, it } from "vitest";
import {
  clientWithJobs,
  clientWithoutJobs,
  createFakeJobs,
  type FakeJobsOptions,
} from "../../test-support/fake-jobs.js";
import { CODING_AGENT_TOOL_NAMES, createCodingAgentTools } from "../coding-agent-tools.js";
import { createJobInputTool } from "./input.js";
import { createJobKillTool } from "./kill.js";
import { createJobListTool } from "./list.js";
import { createJobOutputTool, type JobOutputToolOptions } from "./output.js";

const JOB_TOOLS = ["job_output", "job_input", "job_kill", "job_list"];

function setup(options: FakeJobsOptions & JobOutputToolOptions = {}) {
  const fake = createFakeJobs(options);
  const client = clientWithJobs(fake.jobs);
  return {
    ...fake,
    client,
    output: createJobOutputTool(client, options),
    input: createJobInputTool(client),
    kill: createJobKillTool(client),
    list: createJobListTool(client),
  };
}

/** What a model reads of a call: the rendered result, or the error it threw. */
async function modelSees(
  tool: { execute(input: unknown): Promise<unknown>; toModelOutput(output: never): unknown },
  input: unknown,
) {
  try {
    const output = await tool.execute(input);
    return renderToolResult({
      ok: true,
      result: (tool.toModelOutput as (output: unknown) => never)(output),
    });
  } catch (error) {
    return renderToolResult({ ok: false, error });
  }
}

describe("the job tools' registration", () => {
  it("offers the job tools only over a client that offers jobs", () => {
    const withJobs = createCodingAgentTools(setup().client).map((tool) => tool.name);
    expect(withJobs).toEqual([...CODING_AGENT_TOOL_NAMES]);
    expect(withJobs.slice(-4)).toEqual(JOB_TOOLS);
    const without = createCodingAgentTools(clientWithoutJobs()).map((tool) => tool.name);
    expect(without).toEqual(CODING_AGENT_TOOL_NAMES.filter((name) => !JOB_TOOLS.includes(name)));
    expect(without).toHaveLength(10);
  });

  it("makes them when named in `only`, and each refuses over a client without jobs", async () => {
    const tools = createCodingAgentTools(clientWithoutJobs(), { only: [...JOB_TOOLS, "bash"] });
    expect(tools.map((tool) => tool.name)).toEqual([...JOB_TOOLS, "bash"]);
    const inputs: Record<string, unknown> = {
      job_output: { jobId: "1" },
      job_input: { jobId: "1", text: "y\n" },
      job_kill: { jobId: "1" },
      job_list: {},
      bash: { command: "npm run dev", background: true },
    };
    for (const tool of tools) {
      const refusal = await tool.execute(inputs[tool.name]).catch((error: unknown) => error);
      expect(refusal, tool.name).toBeInstanceOf(ToolError);
      expect(refusal, tool.name).toMatchObject({
        code: "UNSUPPORTED",
        message: expect.stringContaining("Run the command in the foreground"),
      });
    }
  });
});

describe("job_output", () => {
  it("reads from a cursor and says where to go on", async () => {
    const { jobs, job, output } = setup();
    const { jobId } = await jobs.start("node server.js");
    job(jobId).print("starting\n");
    const first = await output.execute({ jobId });
    expect(first).toEqual({
      jobId,
      state: "running",
      exitCode: null,
      output: "starting\n",
      since: 0,
      next: 9,
      skippedBytes: 0,
      more: false,
    });
    expect(output.toModelOutput(first)).toMatchInlineSnapshot(`
      {
        "error": false,
        "output": "starting
      [read what it prints next with job_output (jobId "1", since 9, waitMs to wait); job_input answers it, job_kill stops it]
      [job 1 running · next 9]",
      }
    `);
    job(jobId).print("listening on 3000\n");
    const second = await output.execute({ jobId, since: first.next });
    expect(second).toMatchObject({ output: "listening on 3000\n", since: 9, next: 27 });
    // Nothing new: an empty read at once, the cursor unchanged.
    expect(await output.execute({ jobId, since: second.next })).toMatchObject({
      output: "",
      next: 27,
    });
  });

  it("pages a long output by `more` and `next`, never cutting a character", async () => {
    const { jobs, job, output } = setup({ maxOutputBytes: 10 });
    const { jobId } = await jobs.start("cat big");
    job(jobId).print("aaaaaaaaa✓bbbbbbbbbb");
    const pages: string[] = [];
    let since = 0;
    for (let more = true; more; ) {
      const page = await output.execute({ jobId, since });
      pages.push(page.output);
      ({ more } = page);
      since = page.next;
    }
    expect(pages).toEqual(["aaaaaaaaa", "✓bbbbbbb", "bbb"]);
    expect(since).toBe(22);
    job(jobId).exit(0);
    const first = await output.execute({ jobId });
    expect(output.toModelOutput(first).output).toMatchInlineSnapshot(`
      "aaaaaaaaa
      [more output is waiting: call job_output with jobId "1" and since 9]
      [job 1 exited 0 · next 9]"
    `);
  });

  it("says how many bytes were dropped before they were read", async () => {
    const { jobs, job, output } = setup({ keepBytes: 8 });
    const { jobId } = await jobs.start("yes");
    job(jobId).print("0123456789abcdef");
    const read = await output.execute({ jobId, since: 2 });
    expect(read).toMatchObject({ output: "89abcdef", since: 8, skippedBytes: 6, next: 16 });
    expect(output.toModelOutput(read).output).toContain(
      "[6 bytes of output were dropped before they were read: the job keeps only its latest output]",
    );
  });

  it("waits for output, and returns as soon as some comes", async () => {
    const { jobs, job, output } = setup();
    const { jobId } = await jobs.start("sleep 1; echo done");
    // Were it to wait the whole 600 s, the test would time out.
    const reading = output.execute({ jobId, waitMs: 600_000 });
    job(jobId).print("done\n");
    expect(await reading).toMatchObject({ output: "done\n", state: "running" });
  });

  it("waits for `until` to match, and says whether it did", async () => {
    const { jobs, job, output } = setup();
    const { jobId } = await jobs.start("npm run dev");
    const reading = output.execute({ jobId, until: "listening on \\d+", waitMs: 600_000 });
    job(jobId).print("compiling\n");
    job(jobId).print("listening on 5173\n");
    const read = await reading;
    expect(read).toMatchObject({ output: "compiling\nlistening on 5173\n", matched: true });
    expect(output.toModelOutput(read).output).toContain("[`until` matched]");
    const missed = await output.execute({ jobId, since: read.next, until: "error", waitMs: 1 });
    expect(missed).toMatchObject({ output: "", matched: false });
    expect(output.toModelOutput(missed).output).toContain(
      "[`until` did not match yet: call job_output again from `next` with a `waitMs` to keep waiting]",
    );
  });

  it("gives the exit status once the job has ended, flagging a failure", async () => {
    const { jobs, job, output } = setup();
    const { jobId } = await jobs.start("make");
    job(jobId).print("error: no rule\n");
    job(jobId).exit(2);
    const read = await output.execute({ jobId });
    expect(read).toMatchObject({ state: "exited", exitCode: 2 });
    expect(output.toModelOutput(read)).toEqual({
      output: "error: no rule\n[job 1 exited 2 · next 15]",
      error: true,
    });
  });

  it("refuses a bad `until`, `since` or `waitMs`, naming the field", async () => {
    const { jobs, output } = setup();
    const { jobId } = await jobs.start("x");
    const refusals = await Promise.all(
      [
        { jobId, until: "(unclosed" },
        { jobId, since: -1 },
        { jobId, waitMs: 600_001 },
        { jobId: "" },
        { jobId, extra: 1 },
      ].map((input) => modelSees(output, input)),
    );
    for (const refusal of refusals) expect(refusal).toMatchObject({ code: "INVALID_INPUT" });
    expect(refusals[0]?.output).toMatch(
      /until.*not a valid JavaScript regular expression: Invalid regular expression/s,
    );
    expect(refusals[1]?.output).toContain("since");
    expect(refusals[2]?.output).toContain("waitMs");
  });

  it("answers an unknown job by pointing at job_list", async () => {
    const { output, input, kill } = setup();
    for (const [tool, call] of [
      [output, { jobId: "7" }],
      [input, { jobId: "7", text: "y\n" }],
      [kill, { jobId: "7" }],
    ] as const) {
      expect(await modelSees(tool, call)).toEqual({
        output: 'there is no job "7" in this session; job_list lists its jobs with their ids',
        error: true,
        code: "NOT_FOUND",
      });
    }
  });

  it("stops waiting when the call is aborted", async () => {
    const { jobs, output } = setup();
    const { jobId } = await jobs.start("sleep 600");
    const controller = new AbortController();
    const reading = output.execute({ jobId, waitMs: 600_000 }, { abortSignal: controller.signal });
    controller.abort();
    await expect(reading).rejects.toMatchObject({ code: "ABORTED" });
  });
});

describe("job_input, job_kill and job_list", () => {
  it("writes text to a job's stdin as given", async () => {
    const { jobs, job, input } = setup();
    const { jobId } = await jobs.start("python3 -i", { pty: true });
    const written = await input.execute({ jobId, text: "print('é')\n" });
    expect(written).toEqual({ jobId, bytes: 12 });
    expect(job(jobId).inputs).toEqual(["print('é')\n"]);
    expect(input.toModelOutput(written).output).toBe(
      "[wrote 12 bytes to job 1's stdin; read its answer with job_output from your last `next`]",
    );
    expect(await modelSees(input, { jobId, text: "" })).toMatchObject({ code: "INVALID_INPUT" });
    job(jobId).exit(0);
    expect(await modelSees(input, { jobId, text: "x" })).toMatchObject({ code: "CONFLICT" });
  });

  it("kills a job and lists the session's jobs", async () => {
    const { jobs, job, kill, list } = setup();
    const server = await jobs.start("node server.js");
    const build = await jobs.start("make", { pty: true });
    job(build.jobId).print("ok\n");
    job(build.jobId).exit(0);
    const killed = await kill.execute({ jobId: server.jobId });
    expect(killed).toMatchObject({ jobId: "1", state: "killed", signal: "SIGTERM" });
    expect(kill.toModelOutput(killed)).toEqual({
      output: "[job 1 killed by SIGTERM]",
      error: false,
    });
    const listed = await list.execute({});
    expect(listed.jobs.map((entry) => [entry.jobId, entry.state])).toEqual([
      ["1", "killed"],
      ["2", "exited"],
    ]);
    expect(list.toModelOutput(listed).output).toMatchInlineSnapshot(`
      "[job 1 killed by SIGTERM] 0 bytes printed: node server.js
      [job 2 exited 0] 3 bytes printed, in a pty: make"
    `);
    expect(await modelSees(list, { all: true })).toMatchObject({ code: "INVALID_INPUT" });
  });

  it("lists no jobs with a hint to start one", async () => {
    const { list } = setup();
    expect(list.toModelOutput(await list.execute({})).output).toBe(
      "[no jobs in this session; bash with `background: true` starts one]",
    );
  });
});
