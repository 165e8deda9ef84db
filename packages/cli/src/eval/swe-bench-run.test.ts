import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { runCli } from "../test-support/run-cli.js";
import { git } from "./git.js";
import { sandboxVisibleTempParent } from "./mini-dataset.js";
import type { EvalReport } from "./report.js";

const TEST_PATCH = `diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -4,3 +4,8 @@
 
 def test_adds_positive():
     assert add(1, 2) == 3
+
+
+@pytest.mark.parametrize("pair", ["-1 -2"])
+def test_adds_negative(pair):
+    assert add(*map(int, pair.split())) == -3
`;

const GOLD_PATCH = `diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return abs(a) + abs(b)
+    return a + b
`;

/**
 * A local repository in SWE-bench's place for pytest-dev/pytest: a folder of that path under the
 * current folder, which makes `repo: "pytest-dev/pytest"` local rather than GitHub.
 */
async function sweBenchShapedRepository(): Promise<{ cwd: string; baseCommit: string }> {
  // The sandbox's /tmp is private: the repository must be elsewhere for it to be cloned.
  const cwd = await useTempDir({
    prefix: "pleach-swe-bench-run-",
    parent: await sandboxVisibleTempParent(),
  });
  const repo = path.join(cwd, "pytest-dev", "pytest");
  await mkdir(path.join(repo, "tests"), { recursive: true });
  await writeFile(path.join(repo, "calc.py"), "def add(a, b):\n    return abs(a) + abs(b)\n");
  await writeFile(
    path.join(repo, "tests", "test_calc.py"),
    "import pytest\n\nfrom calc import add\n\ndef test_adds_positive():\n    assert add(1, 2) == 3\n",
  );
  await writeFile(path.join(repo, "conftest.py"), "");
  await git(["init", "--quiet", "--initial-branch=main"], { cwd: repo });
  await git(["add", "--all"], { cwd: repo });
  await git(["commit", "--quiet", "--message", "base"], { cwd: repo });
  return { cwd, baseCommit: await git(["rev-parse", "HEAD"], { cwd: repo }) };
}

describe("pleach eval on a SWE-bench instance without a test command", () => {
  it("runs SWE-bench's pytest command and grades by the names SWE-bench's datasets hold", async (context) => {
    const { cwd, baseCommit } = await sweBenchShapedRepository();
    const instance = {
      instance_id: "pytest-dev__pytest-1",
      repo: "pytest-dev/pytest",
      version: "8.0",
      base_commit: baseCommit,
      problem_statement: "add() drops the sign of negative numbers",
      test_patch: TEST_PATCH,
      patch: GOLD_PATCH,
      // SWE-bench's datasets cut an id at its first space: `test_adds_negative[-1 -2]`.
      FAIL_TO_PASS: '["tests/test_calc.py::test_adds_negative[-1"]',
      PASS_TO_PASS: '["tests/test_calc.py::test_adds_positive"]',
    };
    const file = path.join(cwd, "instances.jsonl");
    await writeFile(file, `${JSON.stringify(instance)}\n`);
    const evaluate = async (model: string) => {
      const { stdout } = await runCli(["eval", file, "--model", model, "--json"], { cwd });
      return (JSON.parse(stdout) as EvalReport).instances[0];
    };
    const pytest = await new Promise<boolean>((resolve) => {
      execFile("pytest", ["--version"], (error) => resolve(error === null));
    });
    if (!pytest) {
      context.skip(
        "SWE-bench's command runs `pytest`, which is not on PATH (Debian: python3-pytest)",
      );
      return;
    }
    const gold = await evaluate("gold");
    expect(gold).toMatchObject({ status: "resolved", resolved: true });
    expect(gold?.statuses).toMatchObject({
      "tests/test_calc.py::test_adds_negative[-1 -2]": "PASSED",
      "tests/test_calc.py::test_adds_negative[-1": "PASSED",
      "tests/test_calc.py::test_adds_positive": "PASSED",
    });
    const empty = await evaluate("empty");
    expect(empty).toMatchObject({
      status: "unresolved",
      FAIL_TO_PASS: { failed: ["tests/test_calc.py::test_adds_negative[-1"] },
      PASS_TO_PASS: { passed: ["tests/test_calc.py::test_adds_positive"] },
    });
  }, 120_000);

  it("is an error, with the reason, when the test output names no test", async () => {
    const { cwd, baseCommit } = await sweBenchShapedRepository();
    const file = path.join(cwd, "instances.jsonl");
    await writeFile(
      file,
      `${JSON.stringify({
        instance_id: "silent",
        repo: "./pytest-dev/pytest",
        base_commit: baseCommit,
        problem_statement: "x",
        test_patch: TEST_PATCH,
        FAIL_TO_PASS: ["tests/test_calc.py::test_adds_positive"],
        test_command: "echo all good",
      })}\n`,
    );
    const { code, stdout } = await runCli(["eval", file, "--model", "empty", "--json"], { cwd });
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as EvalReport;
    expect(report.instances[0]).toMatchObject({ status: "error", resolved: false });
    expect(report.instances[0]?.error).toContain("no test status found in the test output");
  }, 120_000);
});
