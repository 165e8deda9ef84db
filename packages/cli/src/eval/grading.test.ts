import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gradeInstance, type TestRun } from "./grading.js";
import type { EvalInstance } from "./instances.js";

// Every log here is printed by the real runner (Debian's python3-pytest, python3-django and
// python3-sympy) on the small suites below, at test time; what each test does is fixed by the
// suite, and the grades follow from SWE-bench's rules.

const PYTEST_SUITE = `import pytest

def test_passes():
    assert True

def test_fails():
    assert 1 == 2

@pytest.mark.skip(reason="not now")
def test_skipped():
    pass

@pytest.mark.xfail(reason="known bug")
def test_xfails():
    assert False

@pytest.mark.xfail(reason="fixed already")
def test_xpasses():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_errors(broken):
    pass

@pytest.mark.parametrize("text", ["a b", "c - d", "x]y z"])
def test_spaced(text):
    assert text != "c - d"
`;

const DJANGO_TESTS = `import unittest
from django.test import SimpleTestCase

class MathTests(SimpleTestCase):
    def test_passes(self):
        self.assertEqual(1 + 1, 2)

    def test_fails(self):
        self.assertEqual(1, 2)

    def test_errors(self):
        raise RuntimeError("boom")

    @unittest.skip("not now")
    def test_skipped(self):
        pass

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_unexpected_success(self):
        pass

    def test_documented(self):
        """Adds numbers the documented way."""
        self.assertEqual(2 + 2, 4)

    def test_prints(self):
        print("noise from the test")
`;

const SYMPY_SUITE = `from sympy.testing.pytest import skip, XFAIL

def test_passes():
    assert 1 + 1 == 2

def test_fails():
    assert 1 == 2

def test_errors():
    raise RuntimeError("boom")

def test_skipped():
    skip("not now")

@XFAIL
def test_xfails():
    assert 1 == 2

@XFAIL
def test_xpasses():
    pass

def test_last():
    pass
`;

/** What bin/test does: sympy's own runner and reporter, verbose and without colour (-C). */
const SYMPY_RUNNER = `import sys
from sympy.testing.runtests import SymPyTests, PyTestReporter
tests = SymPyTests(PyTestReporter(verbose=True, colors=False))
tests._testfiles.extend(sys.argv[1:])
sys.exit(0 if tests.test(sort=True) else 1)
`;

/** The first Python that imports `module`: Debian's, or the one on PATH. */
async function pythonWith(module: string): Promise<string | undefined> {
  for (const python of ["/usr/bin/python3", "python3"]) {
    const found = await new Promise<boolean>((resolve) => {
      execFile(python, ["-c", `import ${module}`], (error) => resolve(error === null));
    });
    if (found) return python;
  }
  return undefined;
}

/** stdout and stderr of a runner that may fail, as run_tests hands them to the grader. */
function runOutput(command: string, args: string[], cwd: string): Promise<string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(PYTEST|VITEST|PYTHON)/.test(name)),
  );
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== "number") reject(error);
      else resolve(`${stdout}\n${stderr}`);
    });
  });
}

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), text);
  }
}

function instance(repo: string, FAIL_TO_PASS: string[], PASS_TO_PASS: string[] = []): EvalInstance {
  return {
    instance_id: "case",
    repo,
    base_commit: "HEAD",
    problem_statement: "",
    test_patch: "",
    FAIL_TO_PASS,
    PASS_TO_PASS,
  };
}

const run = (output: string, timedOut = false): TestRun => ({
  output,
  timedOut,
  timeoutMs: 600_000,
});

/** A runner's logs, made once; undefined with the reason when the runner is missing. */
interface Logs {
  missing?: string;
  [variant: string]: string | undefined;
}

const folders: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of folders) await cleanup();
});

async function suiteFolder(files: Record<string, string>): Promise<string> {
  const { dir, cleanup } = await makeTempDir("pleach-grading-");
  folders.push(cleanup);
  await writeTree(dir, files);
  return dir;
}

async function pytestLogs(): Promise<Logs> {
  const python = await pythonWith("pytest");
  if (python === undefined) return { missing: "pytest (Debian: apt-get install python3-pytest)" };
  const dir = await suiteFolder({ "test_suite.py": PYTEST_SUITE, "empty/.keep": "" });
  const pytest = (...args: string[]) =>
    runOutput(python, ["-m", "pytest", "-p", "no:cacheprovider", "--color=no", ...args], dir);
  return {
    rA: await pytest("-rA", "test_suite.py"),
    v: await pytest("-v", "test_suite.py"),
    none: await pytest("-rA", "empty"),
  };
}

async function djangoLogs(): Promise<Logs> {
  const python = await pythonWith("django");
  if (python === undefined) return { missing: "django (Debian: apt-get install python3-django)" };
  const dir = await suiteFolder({
    "settings.py": 'SECRET_KEY = "x"\nINSTALLED_APPS = ["app"]\nUSE_TZ = True\n',
    "app/__init__.py": "",
    "app/tests.py": DJANGO_TESTS,
  });
  return {
    verbose: await runOutput(
      python,
      ["-m", "django", "test", "--settings=settings", "--verbosity", "2", "app"],
      dir,
    ),
  };
}

async function sympyLogs(): Promise<Logs> {
  const python = await pythonWith("sympy");
  if (python === undefined) return { missing: "sympy (Debian: apt-get install python3-sympy)" };
  const dir = await suiteFolder({ "test_suite.py": SYMPY_SUITE, "run.py": SYMPY_RUNNER });
  return { verbose: await runOutput(python, ["run.py", "test_suite.py"], dir) };
}

/** The name django's runner printed for a test method: `test_x (app.tests.MathTests[.test_x])`. */
function djangoName(log: string, method: string): string {
  const name = new RegExp(`^${method} \\([^)]*\\)`, "m").exec(log)?.[0];
  expect(name, `django printed no line for ${method}`).toBeDefined();
  return name as string;
}

interface Case {
  name: string;
  log: string;
  FAIL_TO_PASS: string[] | ((log: string) => string[]);
  PASS_TO_PASS?: string[] | ((log: string) => string[]);
  status: "resolved" | "unresolved" | "error";
  timedOut?: boolean;
}

function describeRunner(
  runner: string,
  repo: string,
  makeLogs: () => Promise<Logs>,
  cases: Case[],
): void {
  describe(`${runner} (${repo})`, () => {
    let logs: Logs;
    beforeAll(async () => {
      logs = await makeLogs();
    }, 180_000);

    for (const testCase of cases) {
      it(`${testCase.name}: ${testCase.status}`, (context) => {
        if (logs.missing !== undefined) {
          context.skip(`needs ${logs.missing}, which CI installs`);
          return;
        }
        const log = logs[testCase.log] as string;
        const names = (list: Case["FAIL_TO_PASS"] | undefined) =>
          typeof list === "function" ? list(log) : (list ?? []);
        const grade = gradeInstance(
          instance(repo, names(testCase.FAIL_TO_PASS), names(testCase.PASS_TO_PASS)),
          run(log, testCase.timedOut),
        );
        expect(grade.status, log).toBe(testCase.status);
        expect(grade.resolved).toBe(testCase.status === "resolved");
      });
    }
  });
}

const t = (name: string) => `test_suite.py::${name}`;

describeRunner("pytest", "pytest-dev/pytest", pytestLogs, [
  { name: "-rA: PASSED", log: "rA", FAIL_TO_PASS: [t("test_passes")], status: "resolved" },
  { name: "-rA: FAILED", log: "rA", FAIL_TO_PASS: [t("test_fails")], status: "unresolved" },
  { name: "-rA: ERROR", log: "rA", FAIL_TO_PASS: [t("test_errors")], status: "unresolved" },
  {
    name: "-rA: XFAIL counts as a pass",
    log: "rA",
    FAIL_TO_PASS: [t("test_xfails")],
    status: "resolved",
  },
  {
    name: "-rA: XPASS is not recorded",
    log: "rA",
    FAIL_TO_PASS: [t("test_xpasses")],
    status: "unresolved",
  },
  {
    name: "-rA: a skip names a place, not the test, so a skipped PASS_TO_PASS test is missing",
    log: "rA",
    FAIL_TO_PASS: [t("test_passes")],
    PASS_TO_PASS: [t("test_skipped")],
    status: "unresolved",
  },
  {
    name: "-rA: ids with spaces, whole",
    log: "rA",
    FAIL_TO_PASS: [t("test_spaced[a b]"), t("test_spaced[x]y z]")],
    status: "resolved",
  },
  {
    name: "-rA: ids with spaces, cut at the space as SWE-bench's datasets hold them",
    log: "rA",
    FAIL_TO_PASS: [t("test_spaced[a"), t("test_spaced[x]y")],
    status: "resolved",
  },
  {
    name: "-rA: a failing id with ' - '",
    log: "rA",
    FAIL_TO_PASS: [t("test_spaced[c - d]")],
    status: "unresolved",
  },
  {
    name: "-rA: a failing id with ' - ', cut",
    log: "rA",
    FAIL_TO_PASS: [t("test_spaced[c")],
    status: "unresolved",
  },
  {
    name: "-rA: a test the output does not name",
    log: "rA",
    FAIL_TO_PASS: [t("test_missing")],
    status: "unresolved",
  },
  {
    name: "-v: ids with spaces, whole and cut",
    log: "v",
    FAIL_TO_PASS: [t("test_passes"), t("test_spaced[a b]"), t("test_spaced[x]y")],
    status: "resolved",
  },
  {
    name: "-v: SKIPPED keeps a PASS_TO_PASS test",
    log: "v",
    FAIL_TO_PASS: [t("test_xfails")],
    PASS_TO_PASS: [t("test_skipped")],
    status: "resolved",
  },
  {
    name: "-v: SKIPPED is no pass in FAIL_TO_PASS",
    log: "v",
    FAIL_TO_PASS: [t("test_skipped")],
    status: "unresolved",
  },
  { name: "-v: XPASS", log: "v", FAIL_TO_PASS: [t("test_xpasses")], status: "unresolved" },
  { name: "-v: ERROR", log: "v", FAIL_TO_PASS: [t("test_errors")], status: "unresolved" },
  {
    name: "no test ran: nothing to grade",
    log: "none",
    FAIL_TO_PASS: [t("test_passes")],
    status: "error",
  },
  {
    name: "timed out",
    log: "rA",
    FAIL_TO_PASS: [t("test_passes")],
    timedOut: true,
    status: "error",
  },
]);

const dj = (method: string) => (log: string) => [djangoName(log, method)];

describeRunner("django --verbosity 2", "django/django", djangoLogs, [
  { name: "ok", log: "verbose", FAIL_TO_PASS: dj("test_passes"), status: "resolved" },
  { name: "FAIL", log: "verbose", FAIL_TO_PASS: dj("test_fails"), status: "unresolved" },
  { name: "ERROR", log: "verbose", FAIL_TO_PASS: dj("test_errors"), status: "unresolved" },
  {
    name: "a docstring's first line names the test",
    log: "verbose",
    FAIL_TO_PASS: ["Adds numbers the documented way."],
    status: "resolved",
  },
  {
    name: "ok on the line after the test's own output",
    log: "verbose",
    FAIL_TO_PASS: dj("test_prints"),
    status: "resolved",
  },
  {
    name: "skipped keeps a PASS_TO_PASS test",
    log: "verbose",
    FAIL_TO_PASS: dj("test_passes"),
    PASS_TO_PASS: dj("test_skipped"),
    status: "resolved",
  },
  {
    name: "skipped is no pass in FAIL_TO_PASS",
    log: "verbose",
    FAIL_TO_PASS: dj("test_skipped"),
    status: "unresolved",
  },
  {
    name: "expected failure is not recorded",
    log: "verbose",
    FAIL_TO_PASS: dj("test_expected_failure"),
    status: "unresolved",
  },
  {
    name: "unexpected success is not recorded",
    log: "verbose",
    FAIL_TO_PASS: dj("test_unexpected_success"),
    status: "unresolved",
  },
]);

describeRunner("sympy bin/test --verbose", "sympy/sympy", sympyLogs, [
  { name: "ok", log: "verbose", FAIL_TO_PASS: ["test_passes"], status: "resolved" },
  {
    name: "ok, the file's last test (its line ends in [FAIL])",
    log: "verbose",
    FAIL_TO_PASS: ["test_last"],
    status: "resolved",
  },
  { name: "F", log: "verbose", FAIL_TO_PASS: ["test_fails"], status: "unresolved" },
  { name: "E", log: "verbose", FAIL_TO_PASS: ["test_errors"], status: "unresolved" },
  {
    name: "f (expected to fail) is not recorded",
    log: "verbose",
    FAIL_TO_PASS: ["test_xfails"],
    status: "unresolved",
  },
  {
    name: "X (expected to fail but passed)",
    log: "verbose",
    FAIL_TO_PASS: ["test_xpasses"],
    status: "unresolved",
  },
  {
    name: "s is not recorded, so a skipped PASS_TO_PASS test is missing",
    log: "verbose",
    FAIL_TO_PASS: ["test_passes"],
    PASS_TO_PASS: ["test_skipped"],
    status: "unresolved",
  },
]);
