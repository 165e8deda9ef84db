import { mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MODEL_OUTPUT_LIMIT, renderToolResult } from "@pleach/core";
import { makeTempDir } from "@pleach/core/testing";
import { createCommandWrapper, createLocalSandbox } from "@pleach/sandbox";
import { afterEach, describe, expect, it } from "vitest";
import { createRunTestsTool, type RunTestsOutput } from "./tool.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function workspace() {
  const temp = await makeTempDir("pleach-run-tests-");
  cleanups.push(temp.cleanup);
  return {
    root: temp.dir,
    client: await createLocalSandbox({ root: temp.dir, mode: "danger-full-access" }),
  };
}

const MIXED_TESTS = `import test from "node:test";
import assert from "node:assert";
test("adds", () => assert.strictEqual(1 + 1, 2));
test("divides", () => assert.strictEqual(1 / 2, 2));
test("later", { skip: true }, () => {});
`;

const PASSING_TESTS = `import test from "node:test";
test("one", () => {});
test("two", () => {});
`;

/** A small project whose `npm test` runs node's test runner with the TAP reporter. */
async function nodeProject(root: string, tests: string): Promise<void> {
  await writeFile(
    path.join(root, "package.json"),
    JSON.stringify({
      name: "tiny",
      private: true,
      type: "module",
      scripts: { test: "node --test --test-reporter=tap" },
    }),
  );
  await writeFile(path.join(root, "math.test.mjs"), tests);
}

/** The output with its run-dependent fields (times, full logs) replaced, for snapshots. */
function stable(output: RunTestsOutput) {
  return { ...output, durationMs: "<ms>", stdout: "<stdout>", stderr: "<stderr>" };
}

describe("run_tests", () => {
  it("runs `npm test` by default and parses passing, failing and skipped counts", async () => {
    const { root, client } = await workspace();
    await nodeProject(root, MIXED_TESTS);
    const output = await createRunTestsTool(client).execute({});
    expect(stable(output)).toMatchInlineSnapshot(`
      {
        "durationMs": "<ms>",
        "exitCode": 1,
        "failed": 1,
        "failures": [
          "divides",
        ],
        "passed": 1,
        "runner": "tap",
        "skipped": 1,
        "stderr": "<stderr>",
        "stdout": "<stdout>",
        "timedOut": false,
        "truncated": false,
      }
    `);
    expect(output.stdout).toContain("not ok 2 - divides");
  });

  it("runs a given command in a given folder", async () => {
    const { root, client } = await workspace();
    await mkdir(path.join(root, "pkg"));
    await writeFile(path.join(root, "pkg", "ok.test.mjs"), PASSING_TESTS);
    const tool = createRunTestsTool(client);
    const output = await tool.execute({
      command: "node --test --test-reporter=spec",
      cwd: "pkg",
    });
    expect(output).toMatchObject({ exitCode: 0, passed: 2, failed: 0, skipped: 0, runner: "node" });
    expect(output.failures).toBeUndefined();
    const text = tool.toModelOutput(output);
    expect(text.error).toBe(false);
    expect(text.output.split("\n")[0]).toMatch(
      /^exit code 0 after \d+\.\d s · node: 2 passed, 0 failed, 0 skipped$/,
    );
  });

  it("keeps pytest's xfailed, xpassed, errors and deselected apart, as its summary does", async () => {
    const { client } = await workspace();
    const tool = createRunTestsTool(client);
    const summary =
      "= 1 failed, 2 passed, 24 skipped, 3 deselected, 1 xfailed, 1 xpassed, 1 error in 1.48s =";
    const output = await tool.execute({ command: `echo '${summary}'; exit 1` });
    expect(output).toMatchObject({
      runner: "pytest",
      passed: 2,
      failed: 1,
      skipped: 24,
      xfailed: 1,
      xpassed: 1,
      errors: 1,
      deselected: 3,
    });
    expect(tool.toModelOutput(output).output.split("\n")[0]).toMatch(
      /· pytest: 2 passed, 1 failed, 24 skipped, 1 xfailed, 1 xpassed, 1 error, 3 deselected$/,
    );
  });

  // jest and mocha are the monorepo's devDependencies; the full fixture set is parse.test.ts's.
  it("reports jest's todo apart and mocha's categories in mocha's words, from the real runners", async () => {
    const { root, client } = await workspace();
    const binaries = fileURLToPath(new URL("../../../../../node_modules/.bin/", import.meta.url));
    await writeFile(path.join(root, "package.json"), '{ "name": "tiny", "private": true }');
    await mkdir(path.join(root, "test"));
    const suite = (pending: string) => `describe("math", () => {
  it("adds", () => { if (1 + 1 !== 2) throw new Error("adds"); });
  it("divides", () => { if (6 / 3 !== 3) throw new Error("6 / 3 is 2"); });
  it.skip("rounds", () => {});
  ${pending}
});
`;
    await writeFile(path.join(root, "math.test.js"), suite('it.todo("floors");'));
    await writeFile(path.join(root, "test", "math.spec.js"), suite('it("floors");'));
    const tool = createRunTestsTool(client);

    const jest = await tool.execute({
      command: `NO_COLOR=1 ${binaries}jest --ci --no-watchman --no-cache --rootDir . math.test.js`,
    });
    expect(jest).toMatchObject({ runner: "jest", passed: 1, failed: 1, skipped: 1, todo: 1 });
    expect(jest.failures).toEqual(["math › divides"]);
    expect(jest.stderr).toContain("Tests:       1 failed, 1 skipped, 1 todo, 1 passed, 4 total");
    expect(tool.toModelOutput(jest).output.split("\n")[0]).toMatch(
      /· jest: 1 passed, 1 failed, 1 skipped, 1 todo$/,
    );

    const mocha = await tool.execute({ command: `NO_COLOR=1 ${binaries}mocha` });
    expect(mocha).toMatchObject({ runner: "mocha", passed: 1, failed: 1, skipped: 2 });
    expect(mocha).not.toHaveProperty("todo");
    expect(mocha.failures).toEqual(["math divides"]);
    expect(tool.toModelOutput(mocha).output.split("\n")[0]).toMatch(
      /· mocha: 1 passing, 1 failing, 2 pending$/,
    );
  });

  it("shows the model the summary first, then the output", async () => {
    const { root, client } = await workspace();
    await nodeProject(root, MIXED_TESTS);
    const tool = createRunTestsTool(client);
    const output = await tool.execute({
      command: "node --test --test-reporter=tap; status=$?; echo done >&2; exit $status",
    });
    const text = tool.toModelOutput({
      ...output,
      durationMs: 1234,
      stdout: output.stdout
        .slice(output.stdout.indexOf("# tests"))
        .replace(/# duration_ms \S+/, "# duration_ms <ms>"),
    });
    expect(text).toMatchInlineSnapshot(`
      {
        "error": true,
        "output": "exit code 1 after 1.2 s · tap: 1 passed, 1 failed, 1 skipped
      failing tests:
      - divides
      --- stdout ---
      # tests 3
      # suites 0
      # pass 1
      # fail 1
      # cancelled 0
      # skipped 1
      # todo 0
      # duration_ms <ms>
      --- stderr ---
      done",
      }
    `);
  });

  it("reports a failing command as data and omits the counts it cannot see", async () => {
    const { client } = await workspace();
    const tool = createRunTestsTool(client);
    const failing = await tool.execute({ command: "echo oops >&2; exit 3" });
    expect(failing).toMatchObject({ exitCode: 3, stdout: "", stderr: "oops\n", timedOut: false });
    expect(tool.toModelOutput({ ...failing, durationMs: 5 })).toMatchInlineSnapshot(`
      {
        "error": true,
        "output": "exit code 3 after 0.0 s · no test counts recognised in the output
      --- stderr ---
      oops",
      }
    `);

    const hello = await tool.execute({ command: "echo hello" });
    expect(hello.exitCode).toBe(0);
    for (const key of ["passed", "failed", "skipped", "failures", "runner"]) {
      expect(hello).not.toHaveProperty(key);
    }
    expect(tool.toModelOutput(hello).error).toBe(false);
  });

  it("shows the sandbox's note on a failure that met one of its rules, after the summary", async () => {
    const { root } = await workspace();
    const tool = createRunTestsTool(await createLocalSandbox({ root, mode: "read-only" }));
    const output = await tool.execute({ command: "echo x > snapshot.txt" });
    const note =
      'sandbox: writing snapshot.txt was refused: this sandbox runs in read-only mode, where commands write only their private /tmp. Writing the workspace needs workspace-write mode (--mode workspace-write where pleach is started, mode: "workspace-write" in the options); ask the user to switch.';
    expect(output.sandboxNotes).toEqual([note]);
    expect(tool.toModelOutput({ ...output, durationMs: 5 }).output).toBe(
      `exit code 1 after 0.0 s · no test counts recognised in the output\n[${note}]\n--- stderr ---\n/bin/bash: line 1: snapshot.txt: Read-only file system`,
    );
  });

  it("kills a hanging command at the time limit and says so", async () => {
    const { client } = await workspace();
    const tool = createRunTestsTool(client);
    const output = await tool.execute({ command: "echo started; sleep 30", timeout: 300 });
    expect(output).toMatchObject({ timedOut: true, stdout: "started\n" });
    expect(output.exitCode).not.toBe(0);
    const text = tool.toModelOutput(output);
    expect(text.error).toBe(true);
    expect(text.output).toMatch(/^timed out after \d+\.\d s; the command was killed/);
  });

  it("bounds huge output and keeps the model text within 50,000 characters", async () => {
    const { root, client } = await workspace();
    // Five million characters of noise, then the runner's summary at the very end.
    await writeFile(
      path.join(root, "noisy.test.mjs"),
      `import test from "node:test";\ntest("noisy", () => { process.stdout.write("x".repeat(5_000_000) + "\\n"); });\n`,
    );
    const tool = createRunTestsTool(client, { maxOutputBytes: 200_000 });
    const output = await tool.execute({ command: "node --test --test-reporter=tap" });
    expect(output.truncated).toBe(true);
    expect(output.stdout.length).toBeLessThan(201_000);
    expect(output.stdout).toContain("bytes of stdout cut");
    // The summary is in the kept tail, so the counts survive the cut.
    expect(output).toMatchObject({ exitCode: 0, passed: 1, failed: 0 });
    const text = tool.toModelOutput(output);
    expect(text.output.length).toBeLessThanOrEqual(MODEL_OUTPUT_LIMIT);
    // The cut in plain words: what is shown, and that the command printed more than was kept.
    expect(text.output).toMatch(
      /^exit code 0 .*\n\[output cut: the command printed more than the 200,000 bytes kept of stdout or stderr; /,
    );
    expect(text.output).toMatch(
      /\n--- stdout \[output cut: showing the last \d{2},\d{3} characters; the command printed more than 200,000 bytes to stdout\] ---\n/,
    );
    expect(text.output).not.toMatch(/ of 2\d\d,\d{3} characters/);
    expect(text.output).toContain("# pass 1");
    // Rendering does not cut it again.
    expect(renderToolResult({ ok: true, result: text }).output).toBe(text.output);
  });

  it("gives stderr room in the model text when stdout is huge", async () => {
    const { client } = await workspace();
    const tool = createRunTestsTool(client);
    const output = await tool.execute({
      command: "head -c 300000 /dev/zero | tr '\\0' a; echo; echo 'the real error' >&2; exit 1",
    });
    const text = tool.toModelOutput(output).output;
    expect(text.length).toBeLessThanOrEqual(MODEL_OUTPUT_LIMIT);
    // Cut here, not by the client: the text says how much of what was printed it shows.
    expect(text).toMatch(
      /--- stdout \[output cut: showing the last \d{2},\d{3} of 300,000 characters\] ---/,
    );
    expect(text.endsWith("--- stderr ---\nthe real error")).toBe(true);
  });

  it("refuses a cwd outside the workspace", async () => {
    const { root, client } = await workspace();
    const outside = await makeTempDir("pleach-outside-");
    cleanups.push(outside.cleanup);
    await symlink(outside.dir, path.join(root, "link"));
    const tool = createRunTestsTool(client);
    for (const cwd of ["..", outside.dir, "link", "link/x/.."]) {
      await expect(tool.execute({ command: "touch escaped", cwd })).rejects.toMatchObject({
        code: "PATH_ESCAPE",
      });
    }
    await expect(tool.execute({ command: "true", cwd: "missing" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await readdir(outside.dir)).toEqual([]);
  });

  it("validates its input", async () => {
    const { client } = await workspace();
    const tool = createRunTestsTool(client);
    for (const input of [{ timeout: 0 }, { timeout: 1.5 }, { command: "" }, { cmd: "npm test" }]) {
      await expect(tool.execute(input)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    }
    expect(tool.annotations).toEqual({
      title: "Run tests",
      readOnlyHint: false,
      openWorldHint: false,
    });
  });

  it("does not run without a sandbox that can confine it", async () => {
    const temp = await makeTempDir("pleach-run-tests-");
    cleanups.push(temp.cleanup);
    const client = await createLocalSandbox({
      root: temp.dir,
      mode: "read-only",
      commandWrapper: createCommandWrapper({ backend: "none" }),
    });
    await expect(createRunTestsTool(client).execute({ command: "true" })).rejects.toMatchObject({
      code: "NO_SANDBOX",
    });
  });
});
