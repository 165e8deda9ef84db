import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { TestVerdict } from "@pleach/coding-agent/tools";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import type { EvalInstance } from "./instances.js";
import { repositorySource } from "./repository-source.js";
import { sweBenchStatuses, sweBenchTestCommand } from "./swe-bench.js";

const testPatch = [
  "diff --git a/tests/admin_views/tests.py b/tests/admin_views/tests.py",
  "--- a/tests/admin_views/tests.py",
  "diff --git a/tests/files/data.json b/tests/files/data.json",
  "diff --git a/tests/utils_tests/test_html.py b/tests/utils_tests/test_html.py",
  "diff --git a/astropy/io/tests/test x.py b/astropy/io/tests/test x.py",
].join("\n");

function instance(repo: string, version?: string): EvalInstance {
  return {
    instance_id: "i",
    repo,
    base_commit: "HEAD",
    problem_statement: "",
    test_patch: testPatch,
    FAIL_TO_PASS: [],
    PASS_TO_PASS: [],
    ...(version === undefined ? {} : { version }),
  };
}

describe("sweBenchTestCommand", () => {
  it("is SWE-bench's test_cmd for the repository and version, then the test patch's test files", () => {
    expect(sweBenchTestCommand(instance("django/django", "3.0"))).toBe(
      "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 admin_views.tests utils_tests.test_html 'astropy.io.tests.test x'",
    );
    expect(sweBenchTestCommand(instance("django/django", "1.9"))).toMatch(
      /^\.\/tests\/runtests\.py --verbosity 2 admin_views\.tests /,
    );
    expect(sweBenchTestCommand(instance("astropy/astropy", "1.3"))).toMatch(
      /^pytest -rA -vv -o console_output_style=classic --tb=no -p no:nose tests\/admin_views\/tests\.py /,
    );
    expect(sweBenchTestCommand(instance("astropy/astropy", "5.0"))).toBe(
      "pytest -rA tests/admin_views/tests.py tests/utils_tests/test_html.py 'astropy/io/tests/test x.py'",
    );
    expect(sweBenchTestCommand(instance("sympy/sympy", "1.12"))).toMatch(
      /^PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin\/test -C --verbose tests\//,
    );
    expect(sweBenchTestCommand(instance("mwaskom/seaborn"))).toMatch(/^pytest --no-header -rA /);
    expect(sweBenchTestCommand(instance("sphinx-doc/sphinx"))).toMatch(
      /^tox --current-env -epy39 -v -- /,
    );
  });

  it("is undefined for a repository SWE-bench does not know", () => {
    expect(sweBenchTestCommand(instance("someone/else"))).toBeUndefined();
    expect(sweBenchTestCommand(instance("toString"))).toBeUndefined();
  });
});

describe("sweBenchStatuses", () => {
  const verdict = (
    name: string,
    status: TestVerdict["status"],
    runner: TestVerdict["runner"] = "pytest",
  ): TestVerdict => ({ name, status, runner });

  it("reads only the repository's runner, and gives pytest ids also as SWE-bench cut them", () => {
    const verdicts = [
      verdict("t.py::test_x[a b]", "passed"),
      verdict("t.py::test_x[a c]", "failed"),
      verdict("test_y (m.C)", "passed", "unittest"),
    ];
    expect(Object.fromEntries(sweBenchStatuses(verdicts, "pytest"))).toEqual({
      "t.py::test_x[a b]": "PASSED",
      "t.py::test_x[a c]": "FAILED",
      "t.py::test_x[a": "FAILED",
    });
    expect(Object.fromEntries(sweBenchStatuses(verdicts, "django"))).toEqual({
      "test_y (m.C)": "PASSED",
    });
  });

  it("shortens path parameters (pylint, requests) and MouseButton names (matplotlib)", () => {
    expect([
      ...sweBenchStatuses([verdict("t.py::test_f[/a/b/c.py]", "passed")], "pytest-options").keys(),
    ]).toEqual(["t.py::test_f[/c.py]"]);
    expect([
      ...sweBenchStatuses(
        [verdict("t.py::test_m[MouseButton.LEFT-x]", "passed")],
        "matplotlib",
      ).keys(),
    ]).toEqual(["t.py::test_m[1-x]"]);
  });

  it("keeps seaborn's passes and failures only, so a later error leaves a pass standing", () => {
    const statuses = sweBenchStatuses(
      [verdict("t.py::a", "passed"), verdict("t.py::a", "error"), verdict("t.py::b", "xfail")],
      "seaborn",
    );
    expect(Object.fromEntries(statuses)).toEqual({ "t.py::a": "PASSED" });
  });
});

describe("repositorySource", () => {
  it("takes owner/name for GitHub unless such a folder exists, and resolves every path", async () => {
    const cwd = await useTempDir();
    await mkdir(path.join(cwd, "mirrors", "flask"), { recursive: true });
    expect(await repositorySource("pallets/flask", cwd)).toBe(
      "https://github.com/pallets/flask.git",
    );
    expect(await repositorySource("mirrors/flask", cwd)).toBe(path.join(cwd, "mirrors/flask"));
    expect(await repositorySource("./pallets/flask", cwd)).toBe(path.join(cwd, "pallets/flask"));
    expect(await repositorySource("a/b/c", cwd)).toBe(path.join(cwd, "a/b/c"));
    expect(await repositorySource("/srv/repo", cwd)).toBe("/srv/repo");
    for (const url of ["file:///srv/repo", "https://host/x.git", "git@host:o/n.git"]) {
      expect(await repositorySource(url, cwd)).toBe(url);
    }
  });
});
