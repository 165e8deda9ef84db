// The job tools over a real local session sandbox (bubblewrap): what a model does with a REPL, a
// watcher and a long output, end to end.
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox, type LocalSandbox } from "@pleach/sandbox";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { createCodingAgentTools } from "../coding-agent-tools.js";

const probe = await createLocalSandbox({ root: process.cwd(), session: true });
const sessions = probe.jobs !== undefined && probe.backend === "bubblewrap";
await probe.close();

async function session(): Promise<{ root: string; client: LocalSandbox; call: Call }> {
  const root = await useTempDir("pleach-jobs-");
  const client = await createLocalSandbox({ root, session: true });
  onTestFinished(() => client.close());
  const tools = new Map(createCodingAgentTools(client).map((tool) => [tool.name, tool]));
  const call: Call = async (name, input) => {
    const tool = tools.get(name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    const output = await tool.execute(input);
    return { output, text: tool.toModelOutput(output).output };
  };
  return { root, client, call };
}

type Call = (
  name: string,
  input: Record<string, unknown>,
) => Promise<{ output: Record<string, unknown>; text: string }>;

/** Host processes whose arguments start with `marker`, as the host's process table lists them. */
function hostProcesses(marker: string): string[] {
  const lines = execFileSync("/usr/bin/ps", ["-eo", "args="], { encoding: "utf8" }).split("\n");
  return lines.filter((line) => line.startsWith(marker));
}

describe.skipIf(!sessions)("the job tools over a local session sandbox", () => {
  it("offers all fourteen tools", async () => {
    const { client } = await session();
    expect(createCodingAgentTools(client)).toHaveLength(14);
  });

  it("answers a `read` loop through job_input", async () => {
    const { call } = await session();
    const started = await call("bash", {
      command: 'echo ready; while read -r line; do echo "got $line"; done',
      background: true,
      yieldMs: 10_000,
    });
    expect(started.output).toMatchObject({ output: "ready\n", state: "running", next: 6 });
    const jobId = started.output.jobId as string;
    expect((await call("job_input", { jobId, text: "hello\n" })).output).toEqual({
      jobId,
      bytes: 6,
    });
    const answer = await call("job_output", {
      jobId,
      since: 6,
      until: "got hello",
      waitMs: 30_000,
    });
    expect(answer.output).toMatchObject({ output: "got hello\n", matched: true, next: 16 });
    expect(answer.text).toContain(`[job ${jobId} running · next 16]`);
    const killed = await call("job_kill", { jobId });
    expect(killed.output).toMatchObject({ state: "killed" });
    const listed = await call("job_list", {});
    expect(listed.text).toContain(`[job ${jobId} killed`);
  });

  it("gives a job a terminal with `pty`, where a REPL answers job_input", async () => {
    const { call } = await session();
    const tty = await call("bash", {
      command: "tty",
      background: true,
      pty: true,
      yieldMs: 10_000,
    });
    const ttyRead = await call("job_output", {
      jobId: tty.output.jobId,
      until: "/dev/pts/",
      waitMs: 30_000,
    });
    expect(ttyRead.output).toMatchObject({ matched: true });
    const repl = await call("bash", {
      command: "python3 -i -q",
      background: true,
      pty: true,
      yieldMs: 0,
    });
    const jobId = repl.output.jobId as string;
    const prompt = await call("job_output", { jobId, until: ">>> ", waitMs: 30_000 });
    await call("job_input", { jobId, text: "print(6 * 7)\n" });
    const answer = await call("job_output", {
      jobId,
      since: prompt.output.next,
      until: "\\n42\\r\\n",
      waitMs: 30_000,
    });
    expect(answer.output).toMatchObject({ matched: true });
    // The terminal echoes the input and ends lines with \r\n.
    expect(answer.output.output).toContain("print(6 * 7)\r\n42\r\n");
  });

  it("lets a watcher see a change edit_file made", async () => {
    const { root, call } = await session();
    await writeFile(path.join(root, "app.js"), 'console.log("version one");\n');
    const started = await call("bash", {
      command: "node --watch app.js",
      background: true,
      yieldMs: 0,
    });
    const jobId = started.output.jobId as string;
    const first = await call("job_output", { jobId, until: "version one", waitMs: 30_000 });
    expect(first.output).toMatchObject({ matched: true });
    await call("read_file", { path: "app.js" });
    await call("edit_file", { path: "app.js", old: "version one", new: "version two" });
    const changed = await call("job_output", {
      jobId,
      since: first.output.next,
      until: "version two",
      waitMs: 30_000,
    });
    expect(changed.output).toMatchObject({ matched: true, state: "running" });
  });

  it("keeps a cut output whole outside the workspace, where read_file and grep find it", async () => {
    const { call, root } = await session();
    execFileSync("git", ["init", "-q", root]);
    const result = await call("bash", { command: "seq 1 100000" });
    expect(result.output).toMatchObject({
      truncated: true,
      fullOutput: { path: "/run/pleach-output/cmd-1.log", bytes: 588_895 },
    });
    expect(result.text.split("\n").at(-1)).toBe(
      "[full output: 588,895 bytes kept at /run/pleach-output/cmd-1.log — read_file with offset/limit, or search it with bash: grep -n PATTERN /run/pleach-output/cmd-1.log]",
    );
    const read = await call("read_file", {
      path: "/run/pleach-output/cmd-1.log",
      offset: 77_777,
      limit: 1,
    });
    expect(read.text).toContain("77777");
    // Searched as the note says.
    const found = await call("bash", { command: "grep -n '^77777$' /run/pleach-output/cmd-1.log" });
    expect(found.text).toBe("77777:77777\n");
    // Nothing of it in the workspace, for the model's tools or the host.
    const listed = await call("list_files", { dir: ".", includeIgnored: true });
    expect(JSON.stringify(listed.output)).not.toContain("pleach-output");
    expect((await call("bash", { command: "ls -A" })).text.split("\n")).not.toContain(
      ".pleach-output",
    );
    await expect(
      call("read_file", { path: "/run/pleach-output/../../etc/passwd" }),
    ).rejects.toMatchObject({ code: "PATH_ESCAPE" });
  });

  it("ends every job when the session closes", async () => {
    const root = await useTempDir("pleach-jobs-");
    const client = await createLocalSandbox({ root, session: true });
    const [bash] = createCodingAgentTools(client, { only: ["bash"] });
    const marker = `pleach-job-${process.pid}-${Date.now()}`;
    for (const name of ["a", "b"]) {
      await bash?.execute({
        command: `exec -a ${marker}-${name} sleep 600`,
        background: true,
        yieldMs: 0,
      });
    }
    // yieldMs 0 returns before the job's shell has reached its `exec`.
    await vi.waitFor(() => expect(hostProcesses(marker)).toHaveLength(2), { timeout: 30_000 });
    await client.close();
    expect(hostProcesses(marker)).toEqual([]);
  });
});
