import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { makeTempDir } from "@pleach/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { EvalReport } from "../eval/report.js";
import type { SwebenchRunReport } from "../eval/swebench-report.js";
import { type FakeReply, fakeChatServer } from "../test-support/fake-chat-server.js";
import { runCli } from "../test-support/run-cli.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const run = runCli;

describe("pleach demo", () => {
  it("fixes the sample project with a scripted model: red, then green", async () => {
    const { code, stdout } = await run(["demo"]);
    expect(code).toBe(0);
    const calls = [...stdout.matchAll(/→ (\w+)/g)].map((match) => match[1]);
    expect(calls).toEqual([
      "list_files",
      "run_tests",
      "search_files",
      "read_file",
      "edit_file",
      "read_file",
      "apply_diff",
      "run_tests",
    ]);
    expect(stdout).toContain("← error: exit code 1");
    expect(stdout).toMatch(/← ok: exit code 0 .* 5 passed, 0 failed/);
    expect(stdout).toContain("The tests went from red to green.");
  });

  it("runs from the built bin, finding its sample project beside the package", async () => {
    const bin = fileURLToPath(new URL("../../bin/pleach.js", import.meta.url));
    if (!existsSync(fileURLToPath(new URL("../../dist/main.js", import.meta.url)))) {
      throw new Error("packages/cli is not built: run `npx tsc -b` first");
    }
    const { stdout } = await promisify(execFile)(process.execPath, [bin, "demo", "--json"]);
    const events = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.at(-1)).toMatchObject({ type: "done", result: { stopReason: "final-answer" } });
  });
});

describe("pleach eval", () => {
  /** `pleach eval --dataset mini --model <model> --output FILE`, and FILE's SWE-bench report. */
  async function evalMini(model: string, extra: string[] = []) {
    const temp = await makeTempDir("pleach-eval-out-");
    cleanups.push(temp.cleanup);
    const output = path.join(temp.dir, "report.json");
    const ran = await run([
      "eval",
      "--dataset",
      "mini",
      "--model",
      model,
      "--output",
      output,
      ...extra,
    ]);
    return { ...ran, swebench: JSON.parse(await readFile(output, "utf8")) as SwebenchRunReport };
  }

  it("resolves the whole mini dataset with the gold patches", async () => {
    const { code, stdout, stderr, swebench: report } = await evalMini("gold");
    expect(stderr).toContain("[5/5]");
    expect(code).toBe(0);
    expect(stdout).toContain("model gold: resolved 5 of 5 (100%), unresolved 0, errors 0");
    // SWE-bench's report: the run's counts and ids, and each instance's tests_status.
    expect(report).toMatchObject({
      total_instances: 5,
      completed_instances: 5,
      resolved_instances: 5,
      unresolved_instances: 0,
      empty_patch_instances: 0,
      error_instances: 0,
      unresolved_ids: [],
      error_ids: [],
      schema_version: 2,
    });
    expect(report.resolved_ids).toHaveLength(5);
    expect(report.resolved_ids).toEqual([...report.resolved_ids].sort());
    for (const id of report.resolved_ids) {
      const instance = report.instances[id];
      expect(instance).toMatchObject({
        patch_is_None: false,
        patch_exists: true,
        patch_successfully_applied: true,
        resolved: true,
      });
      expect(instance?.tests_status?.FAIL_TO_PASS.failure).toEqual([]);
      expect(instance?.tests_status?.FAIL_TO_PASS.success.length).toBeGreaterThan(0);
      expect(instance?.tests_status?.PASS_TO_PASS.failure).toEqual([]);
    }
  });

  it("resolves none of it with an empty patch", async () => {
    const { code, stdout, swebench } = await evalMini("empty", ["--json"]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as EvalReport;
    expect(report).toMatchObject({ total: 5, resolved: 0, unresolved: 5, errors: 0 });
    for (const instance of report.instances) {
      expect(instance.FAIL_TO_PASS.passed).toEqual([]);
      expect(instance.PASS_TO_PASS.failed).toEqual([]);
    }
    // As SWE-bench counts them: no change is an empty patch, neither completed nor unresolved.
    expect(swebench).toMatchObject({
      resolved_instances: 0,
      completed_instances: 0,
      empty_patch_instances: 5,
      error_instances: 0,
    });
    expect(Object.values(swebench.instances)).toEqual(
      Array(5).fill(expect.objectContaining({ patch_exists: false, resolved: false })),
    );
  });

  it("reports an instance whose repository cannot be cloned as an error", async () => {
    const temp = await makeTempDir("pleach-eval-bad-");
    cleanups.push(temp.cleanup);
    const file = path.join(temp.dir, "instances.jsonl");
    await writeFile(
      file,
      `${JSON.stringify({
        instance_id: "missing",
        repo: "file:///nonexistent/repo",
        base_commit: "0".repeat(40),
        problem_statement: "x",
        test_patch: "",
        FAIL_TO_PASS: '["a"]',
        PASS_TO_PASS: "[]",
        test_command: "true",
      })}\n`,
    );
    const { code, stdout, stderr } = await run(["eval", file, "--model", "empty"]);
    expect(stderr).toContain("pleach eval: 1 instance, model empty, 1 at a time");
    expect(code).toBe(1);
    expect(stdout).toMatch(/missing\s+error/);
    expect(stdout).toContain("COMMAND_FAILED");
  });

  it("says what is wrong with the command line", async () => {
    expect((await run(["eval", "--model", "gold"])).code).toBe(2);
    expect((await run(["eval", "--dataset", "huge", "--model", "gold"])).stderr).toContain(
      "--dataset must be mini",
    );
  });
});

describe("pleach run", () => {
  it("drives an OpenAI-compatible server through the tools until its final answer", async () => {
    const temp = await makeTempDir("pleach-run-");
    cleanups.push(temp.cleanup);
    await writeFile(path.join(temp.dir, "greeting.txt"), "hello world\n");
    const replies: FakeReply[] = [
      { tool_calls: [{ name: "read_file", arguments: { path: "greeting.txt" } }] },
      {
        tool_calls: [
          { name: "edit_file", arguments: { path: "greeting.txt", old: "world", new: "pleach" } },
        ],
      },
      { content: "Changed the greeting." },
    ];
    const { port, received } = await fakeChatServer(replies);

    const { code, stdout } = await run([
      "run",
      "Greet pleach instead of the world",
      "--workspace",
      temp.dir,
      "--model",
      `http://127.0.0.1:${port}/v1`,
      "--model-name",
      "local-model",
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain("→ edit_file");
    expect(stdout).toContain("Changed the greeting.");
    expect(stdout).toContain("done (final-answer) after 3 steps and 2 tool calls; 45 tokens");
    expect(await readFile(path.join(temp.dir, "greeting.txt"), "utf8")).toBe("hello pleach\n");
    expect(received).toHaveLength(3);
    expect(received[2]?.messages.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringMatching(/^<tool_output tool="edit_file">\nedited greeting\.txt/),
    });
  });

  it("undoes the last step of the last run with --undo-last: edits back, files it made gone", async () => {
    const temp = await makeTempDir("pleach-run-undo-");
    cleanups.push(temp.cleanup);
    await writeFile(path.join(temp.dir, "greeting.txt"), "hello world\n");
    await writeFile(path.join(temp.dir, "keep.txt"), "kept\n");
    const replies: FakeReply[] = [
      { tool_calls: [{ name: "read_file", arguments: { path: "greeting.txt" } }] },
      {
        tool_calls: [
          { name: "edit_file", arguments: { path: "greeting.txt", old: "world", new: "pleach" } },
          { name: "write_file", arguments: { path: "made/new.txt", content: "new\n" } },
        ],
      },
      { content: "Done." },
    ];
    const { port } = await fakeChatServer(replies);
    const model = ["--model", `http://127.0.0.1:${port}/v1`];
    expect((await run(["run", "Change it", "--workspace", temp.dir, ...model])).code).toBe(0);
    expect(await readFile(path.join(temp.dir, "greeting.txt"), "utf8")).toBe("hello pleach\n");
    expect(existsSync(path.join(temp.dir, "made/new.txt"))).toBe(true);

    const undo = await run(["run", "--undo-last", "--workspace", temp.dir]);
    expect(undo).toMatchObject({ code: 0, stderr: "" });
    expect(undo.stdout).toContain("is back as it was before step 2 of the last run");
    expect(undo.stdout).toContain("written back: greeting.txt");
    expect(undo.stdout).toContain("removed: made/new.txt");
    expect(await readFile(path.join(temp.dir, "greeting.txt"), "utf8")).toBe("hello world\n");
    expect(await readFile(path.join(temp.dir, "keep.txt"), "utf8")).toBe("kept\n");
    expect(existsSync(path.join(temp.dir, "made"))).toBe(false);

    const fresh = await makeTempDir("pleach-run-undo-none-");
    cleanups.push(fresh.cleanup);
    const none = await run(["run", "--undo-last", "--workspace", fresh.dir]);
    expect(none).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no run of pleach took a checkpoint"),
    });
    expect(await run(["run", "a task", "--undo-last"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--undo-last takes no task"),
    });
  });

  it("says 1 step, not 1 steps", async () => {
    const temp = await makeTempDir("pleach-run-one-");
    cleanups.push(temp.cleanup);
    const { port } = await fakeChatServer([{ content: "Nothing to do." }]);
    const { code, stdout } = await run([
      ...["run", "Look", "--workspace", temp.dir],
      ...["--model", `http://127.0.0.1:${port}/v1`],
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain("done (final-answer) after 1 step and 0 tool calls; 15 tokens");
    const oneCall = await fakeChatServer([
      { tool_calls: [{ name: "list_files", arguments: { dir: "." } }] },
      { content: "Looked." },
    ]);
    const { stdout: twoSteps } = await run([
      ...["run", "Look", "--workspace", temp.dir],
      ...["--model", `http://127.0.0.1:${oneCall.port}/v1`],
    ]);
    expect(twoSteps).toContain("done (final-answer) after 2 steps and 1 tool call; 30 tokens");
  });

  it("needs a model and the provider's key", async () => {
    const noModel = await run(["run", "do it"]);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain("pleach demo");
    const noKey = await run(["run", "do it", "--model", "anthropic:claude-x"]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("ANTHROPIC_API_KEY");
  });
});
