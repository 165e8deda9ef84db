#!/usr/bin/env node
// Produces the raw output of real test runners for the parse-test-output tests.
//
// Each runner gets a tiny project in a temporary directory with tests whose outcomes we choose
// (some pass, one fails, one is skipped), so the expected counts and failing names are known
// without trusting the parser under test. The raw stdout and stderr of each run are written to
// packages/coding-agent/src/tools/test-output/fixtures/generated/<runner>-<variant>.txt (git-ignored) with a
// manifest.json of what each file must parse to. A runner that is not installed is skipped, and
// the manifest says why so the tests can report it instead of passing silently. vitest, jest and
// mocha run from the monorepo's node_modules (`npm ci` installs them), the others from the machine
// or, for uvu, an npm install under node_modules/.cache.
//
// Usage: node scripts/gen-runner-fixtures.mjs [--force]
//   --force  regenerate even when the manifest is current: same script, same Node version, same
//            vitest, jest and mocha, and none of the runners it found missing installed since. (A failed npm
//            install of uvu is not retried without --force.)

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// vitest, jest and mocha are the monorepo's own devDependencies, pinned in package.json; uvu is
// installed under node_modules/.cache, pinned here. Each fixture changes only when a pin does.
const UVU_VERSION = "0.5.6";

const scriptPath = fileURLToPath(import.meta.url);
const repositoryRoot = path.resolve(path.dirname(scriptPath), "..");
const outputDirectory = path.join(
  repositoryRoot,
  "packages/coding-agent/src/tools/test-output/fixtures/generated",
);
const cacheRoot = path.join(repositoryRoot, "node_modules/.cache/pleach-runner-fixtures");
const manifestPath = path.join(outputDirectory, "manifest.json");
const commandTimeoutMilliseconds = 150_000;

/**
 * The environment every runner sees. Variables that the calling test process sets (vitest's own
 * worker markers, CI annotations, colour switches) would otherwise change what the child runner
 * prints, so they are removed and each variant sets colour explicitly.
 */
function runnerEnvironment(extra = {}) {
  const environment = { ...process.env };
  for (const name of Object.keys(environment)) {
    if (
      name.startsWith("VITEST") ||
      name.startsWith("JEST") ||
      name.startsWith("PYTEST") ||
      name.startsWith("GITHUB_") ||
      name.startsWith("NODE_TEST") ||
      [
        "CI",
        "TEST",
        "NODE_ENV",
        "NODE_OPTIONS",
        "FORCE_COLOR",
        "NO_COLOR",
        "CLICOLOR_FORCE",
        "CARGO_TERM_COLOR",
        "RUST_BACKTRACE",
        "TF_BUILD",
        "BUILDKITE",
        "GITLAB_CI",
      ].includes(name)
    ) {
      delete environment[name];
    }
  }
  return { ...environment, ...extra };
}

/** Runs a command to completion and never rejects: a missing binary is `{ missing: true }`. */
function run(command, args, { cwd, environment = runnerEnvironment() } = {}) {
  return new Promise((resolve) => {
    const stdout = [];
    const stderr = [];
    let settled = false;
    const child = spawn(command, args, {
      cwd,
      env: environment,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish({ timedOut: true, exitCode: null });
    }, commandTimeoutMilliseconds);
    function finish(result) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        missing: false,
        timedOut: false,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        ...result,
      });
    }
    child.stdout.on("data", (chunk) => stdout.push(chunk));
    child.stderr.on("data", (chunk) => stderr.push(chunk));
    child.on("error", (error) =>
      finish({ exitCode: null, missing: error.code === "ENOENT", error: error.message }),
    );
    child.on("close", (exitCode) => finish({ exitCode }));
  });
}

/** Writes a tree of `{ relativePath: contents }` under `root`. */
async function writeTree(root, files) {
  for (const [relativePath, contents] of Object.entries(files)) {
    const filePath = path.join(root, relativePath);
    await mkdir(path.dirname(filePath), { recursive: true });
    await writeFile(filePath, contents);
  }
}

function firstLine(text) {
  return text.trim().split("\n")[0]?.trim() ?? "";
}

/**
 * Every runner group returns `{ fixtures, skipped }`. A fixture is one raw output file plus the
 * counts the parser must recover from it; `skipped` names a runner we could not run, and why.
 */
async function runVariants({ runner, version, cwd, variants, expected }) {
  const fixtures = [];
  for (const variant of variants) {
    const result = await run(variant.command, variant.args, {
      cwd,
      environment: runnerEnvironment(variant.environment),
    });
    const name = `${runner}-${variant.name}`;
    if (result.missing || result.timedOut || result.exitCode === null) {
      return {
        fixtures,
        skipped: [
          {
            runner,
            reason: result.timedOut
              ? `${name} did not finish within ${commandTimeoutMilliseconds / 1000}s`
              : `${name} could not start: ${result.error ?? "killed"}`,
          },
        ],
      };
    }
    const file = `${name}.txt`;
    await writeFile(path.join(outputDirectory, file), `${result.stdout}\n${result.stderr}`);
    fixtures.push({
      name,
      file,
      runner,
      runnerVersion: version,
      command: [variant.command, ...variant.args].join(" "),
      exitCode: result.exitCode,
      // The runner the parser should report; a variant may override it (TAP is its own format).
      expected: { runner, ...(variant.expected ?? expected) },
    });
  }
  return { fixtures, skipped: [] };
}

/**
 * Checks that a runner can start. A missing one comes back with the probe that found it missing,
 * kept in the manifest so that installing the runner later makes the manifest stale.
 */
async function detect(command, args, installHint) {
  const result = await run(command, args);
  const probe = { command, args };
  if (result.missing) {
    return { missing: `\`${command}\` not found on PATH (${installHint})`, probe };
  }
  if (result.exitCode !== 0) {
    const detail = firstLine(result.stderr || result.stdout);
    return {
      missing: `\`${command} ${args.join(" ")}\` failed: ${detail} (${installHint})`,
      probe,
    };
  }
  return { version: firstLine(result.stdout || result.stderr) };
}

// The same shape of suite everywhere: three passes, one failure inside a nested suite (so the
// failing name shows the nesting), one skip, and a todo where the runner has the concept.

async function nodeFixtures(workDirectory) {
  const cwd = path.join(workDirectory, "node");
  await writeTree(cwd, {
    "package.json": '{ "name": "node-fixture", "private": true, "type": "module" }\n',
    "math.test.js": `import assert from "node:assert/strict";
import { describe, it } from "node:test";

describe("math", () => {
  it("adds", () => assert.equal(1 + 1, 2));
  it("subtracts", () => assert.equal(3 - 1, 2));
  it("multiplies", () => assert.equal(2 * 3, 6));
  it.skip("rounds", () => assert.equal(Math.round(2.5), 3));
  it.todo("floors");
  describe("division", () => {
    it("divides", () => assert.equal(6 / 3, 3));
  });
});
`,
  });
  const command = process.execPath;
  // node:test counts todo apart: `ℹ skipped 1`, `ℹ todo 1` (`# todo 1` in TAP).
  const expected = { passed: 3, failed: 1, skipped: 1, todo: 1, failures: ["divides"] };
  return runVariants({
    runner: "node",
    version: process.version,
    cwd,
    expected,
    variants: [
      {
        name: "spec",
        command,
        args: ["--test", "--test-reporter=spec", "math.test.js"],
        environment: { NO_COLOR: "1" },
      },
      {
        name: "spec-color",
        command,
        args: ["--test", "--test-reporter=spec", "math.test.js"],
        environment: { FORCE_COLOR: "1" },
      },
      {
        name: "tap",
        command,
        args: ["--test", "--test-reporter=tap", "math.test.js"],
        environment: { NO_COLOR: "1" },
        expected: { ...expected, runner: "tap" },
      },
    ],
  });
}

const jestStyleMathSuite = `describe("math", () => {
  it("adds", () => expect(1 + 1).toBe(2));
  it("subtracts", () => expect(3 - 1).toBe(2));
  it("multiplies", () => expect(2 * 3).toBe(6));
  it.skip("rounds", () => expect(Math.round(2.5)).toBe(3));
  it.todo("floors");
  describe("division", () => {
    it("divides", () => expect(6 / 3).toBe(3));
  });
});
`;
const jestStyleStringSuite = `describe("strings", () => {
  it("concatenates", () => expect("a" + "b").toBe("ab"));
});
`;

/**
 * A runner among the monorepo's devDependencies: its binary and installed version, or the
 * `skipped` entry that says to run npm ci. Its version is the one package-lock.json pins.
 */
async function devDependencyRunner(runner) {
  const binary = path.join(repositoryRoot, "node_modules/.bin", runner);
  const packageJson = path.join(repositoryRoot, "node_modules", runner, "package.json");
  if (!existsSync(binary) || !existsSync(packageJson)) {
    return { skipped: [{ runner, reason: `node_modules/.bin/${runner} is missing: run npm ci` }] };
  }
  const { version } = JSON.parse(await readFile(packageJson, "utf8"));
  return { binary, version };
}

async function vitestFixtures(workDirectory) {
  const { binary: vitestBinary, version, skipped } = await devDependencyRunner("vitest");
  if (skipped) return { fixtures: [], skipped };
  const cwd = path.join(workDirectory, "vitest");
  // Two files so the default reporter summarises instead of listing every test.
  await writeTree(cwd, {
    "package.json": '{ "name": "vitest-fixture", "private": true, "type": "module" }\n',
    "math.test.js": jestStyleMathSuite,
    "strings.test.js": jestStyleStringSuite,
  });
  const args = ["run", "--root", cwd, "--globals"];
  return runVariants({
    runner: "vitest",
    version,
    cwd,
    expected: {
      passed: 4,
      failed: 1,
      skipped: 1,
      todo: 1,
      failures: ["math.test.js > math > division > divides"],
    },
    variants: [
      { name: "default", command: vitestBinary, args, environment: { NO_COLOR: "1" } },
      { name: "color", command: vitestBinary, args, environment: { FORCE_COLOR: "1" } },
      {
        name: "verbose",
        command: vitestBinary,
        args: [...args, "--reporter=verbose"],
        environment: { NO_COLOR: "1" },
      },
    ],
  });
}

/**
 * Installs npm packages once per set of versions under node_modules/.cache, because the npm
 * install is the slow part of this script and the versions are pinned anyway.
 */
async function installNpmPackages(packages) {
  const specs = packages.map(([name, version]) => `${name}@${version}`);
  const directory = path.join(
    cacheRoot,
    `npm-${packages.map(([name, version]) => `${name}-${version}`).join("-")}`,
  );
  const marker = path.join(directory, ".installed");
  if (existsSync(marker)) return { directory };
  await rm(directory, { recursive: true, force: true });
  await mkdir(directory, { recursive: true });
  // A package.json of its own stops npm from walking up into the pleach workspace root.
  await writeFile(
    path.join(directory, "package.json"),
    '{ "name": "pleach-runner-fixtures-cache", "private": true }\n',
  );
  const result = await run(
    "npm",
    [
      "install",
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
      "--prefix",
      directory,
      ...specs,
    ],
    { cwd: directory },
  );
  if (result.missing || result.exitCode !== 0) {
    const detail = result.missing ? "npm not found" : firstLine(result.stderr || result.stdout);
    return { error: `npm install ${specs.join(" ")} failed: ${detail}` };
  }
  await writeFile(marker, `${new Date().toISOString()}\n`);
  return { directory };
}

async function jestFixtures(workDirectory) {
  const { binary: jestBinary, version, skipped } = await devDependencyRunner("jest");
  if (skipped) return { fixtures: [], skipped };
  const cwd = path.join(workDirectory, "jest");
  await writeTree(cwd, {
    "package.json": '{ "name": "jest-fixture", "private": true }\n',
    "math.test.js": jestStyleMathSuite,
    "strings.test.js": jestStyleStringSuite,
  });
  const args = ["--ci", "--no-watchman", "--no-cache", "--rootDir", cwd];
  return runVariants({
    runner: "jest",
    version,
    cwd,
    // jest counts todo apart from skipped: `1 failed, 1 skipped, 1 todo, 4 passed, 7 total`.
    expected: {
      passed: 4,
      failed: 1,
      skipped: 1,
      todo: 1,
      failures: ["math › division › divides"],
    },
    variants: [
      { name: "default", command: jestBinary, args, environment: { NO_COLOR: "1" } },
      { name: "color", command: jestBinary, args, environment: { FORCE_COLOR: "1" } },
      {
        name: "verbose",
        command: jestBinary,
        args: [...args, "--verbose"],
        environment: { NO_COLOR: "1" },
      },
    ],
  });
}

async function mochaFixtures(workDirectory) {
  const { binary: mochaBinary, version, skipped } = await devDependencyRunner("mocha");
  if (skipped) return { fixtures: [], skipped };
  const cwd = path.join(workDirectory, "mocha");
  await writeTree(cwd, {
    "package.json": '{ "name": "mocha-fixture", "private": true }\n',
    "test/lookups.spec.js": `describe("lookups", () => {
  beforeEach(() => {
    throw new Error("no table");
  });
  it("finds", () => {});
  it("misses", () => {});
});
`,
    "test/math.spec.js": `const assert = require("node:assert/strict");

describe("math", () => {
  it("adds", () => assert.equal(1 + 1, 2));
  it("subtracts", () => assert.equal(3 - 1, 2));
  it("multiplies", () => assert.equal(2 * 3, 6));
  it.skip("rounds", () => assert.equal(Math.round(2.5), 3));
  it("floors");
  describe("division", () => {
    it("divides", () => assert.equal(6 / 3, 3));
  });
});
`,
  });
  return runVariants({
    runner: "mocha",
    version,
    cwd,
    // mocha's categories are passing, failing and pending: a test without a body is pending, like
    // it.skip, and a failed hook is failing (the tests it guards are counted nowhere).
    expected: {
      passed: 3,
      failed: 2,
      skipped: 2,
      failures: ['lookups "before each" hook for "finds"', "math division divides"],
    },
    variants: [
      { name: "default", command: mochaBinary, args: [], environment: { NO_COLOR: "1" } },
      { name: "color", command: mochaBinary, args: [], environment: { FORCE_COLOR: "1" } },
      // mocha's TAP reporter ends with `# pass` and `# fail` only; its skips are `# SKIP` points.
      {
        name: "tap",
        command: mochaBinary,
        args: ["--reporter", "tap"],
        environment: { NO_COLOR: "1" },
        expected: {
          runner: "tap",
          passed: 3,
          failed: 2,
          skipped: 2,
          failures: ['lookups "before each" hook for "finds"', "math division divides"],
        },
      },
    ],
  });
}

async function uvuFixtures(workDirectory, installation) {
  if (installation.error) {
    return { fixtures: [], skipped: [{ runner: "uvu", reason: installation.error }] };
  }
  const cwd = path.join(workDirectory, "uvu");
  // uvu has no nesting and no todo: a suite per file part, and a test outside any suite.
  await writeTree(cwd, {
    "package.json": '{ "name": "uvu-fixture", "private": true }\n',
    "tests/math.js": `const { suite } = require("uvu");
const assert = require("uvu/assert");

const math = suite("math");
math("adds", () => assert.is(1 + 1, 2));
math("subtracts", () => assert.is(3 - 1, 2));
math("multiplies", () => assert.is(2 * 3, 6));
math.skip("rounds", () => assert.is(Math.round(2.5), 3));
math.run();

const division = suite("division");
division("divides", () => assert.is(6 / 3, 3));
division.run();
`,
    "tests/strings.js": `const { test } = require("uvu");
const assert = require("uvu/assert");

test("concatenates", () => assert.is("a" + "b", "ab"));
test.run();
`,
  });
  const uvuBinary = path.join(installation.directory, "node_modules/.bin/uvu");
  // The tests `require("uvu")`, which is installed in the cache, not beside them.
  const NODE_PATH = path.join(installation.directory, "node_modules");
  return runVariants({
    runner: "uvu",
    version: UVU_VERSION,
    cwd,
    expected: { passed: 4, failed: 1, skipped: 1, failures: ["division > divides"] },
    variants: [
      {
        name: "default",
        command: uvuBinary,
        args: ["tests"],
        environment: { NODE_PATH, NO_COLOR: "1" },
      },
      {
        name: "color",
        command: uvuBinary,
        args: ["tests"],
        environment: { NODE_PATH, FORCE_COLOR: "1" },
      },
    ],
  });
}

async function pytestFixtures(workDirectory) {
  const detected = await detect(
    "python3",
    ["-m", "pytest", "--version"],
    "Debian: apt-get install python3-pytest",
  );
  if (detected.missing) {
    return {
      fixtures: [],
      skipped: [{ runner: "pytest", reason: detected.missing, probe: detected.probe }],
    };
  }
  const cwd = path.join(workDirectory, "pytest");
  await writeTree(cwd, {
    "test_math.py": `import pytest


def test_adds():
    assert 1 + 1 == 2


def test_subtracts():
    assert 3 - 1 == 2


def test_multiplies():
    assert 2 * 3 == 6


@pytest.mark.skip(reason="rounding is not settled")
def test_rounds():
    assert round(2.5) == 3


@pytest.mark.xfail(reason="floor is not written yet", strict=True)
def test_floors():
    raise NotImplementedError


class TestDivision:
    def test_divides(self):
        assert 6 / 3 == 3


@pytest.mark.xfail(reason="ceil may work already")
def test_ceils():
    assert -(-5 // 2) == 3


@pytest.fixture
def table():
    raise RuntimeError("no table")


def test_looks_up(table):
    assert table
`,
  });
  const pytestExpected = {
    passed: 3,
    failed: 1,
    skipped: 1,
    xfailed: 1,
    xpassed: 1,
    errors: 1,
    failures: ["test_math.py::TestDivision::test_divides", "test_math.py::test_looks_up"],
  };
  // Plugins installed on the machine (pytest-sugar, pytest-randomly) would change the output.
  const environment = { PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1", PYTHONDONTWRITEBYTECODE: "1" };
  const base = ["-m", "pytest", "-p", "no:cacheprovider"];
  return runVariants({
    runner: "pytest",
    version: detected.version.replace(/^pytest\s+/, ""),
    cwd,
    // pytest's own categories: an xfailed, an xpassed and an erroring test each counted apart.
    expected: pytestExpected,
    variants: [
      { name: "default", command: "python3", args: [...base, "--color=no"], environment },
      {
        name: "deselect",
        command: "python3",
        args: [...base, "--color=no", "--deselect", "test_math.py::test_multiplies"],
        environment,
        expected: { ...pytestExpected, passed: 2, deselected: 1 },
      },
      { name: "quiet", command: "python3", args: [...base, "-q", "--color=no"], environment },
      { name: "verbose", command: "python3", args: [...base, "-v", "--color=no"], environment },
      { name: "color", command: "python3", args: [...base, "--color=yes"], environment },
    ],
  });
}

/**
 * The first Python that imports `module` (the one on PATH, else Debian's), with its version;
 * `missing` says why there is none.
 */
async function pythonWith(module, installHint) {
  let detected;
  for (const python of ["python3", "/usr/bin/python3"]) {
    detected = await detect(
      python,
      ["-c", `import ${module}, sys; print(sys.version)`],
      installHint,
    );
    if (!detected.missing) return { python, version: detected.version.split(" ")[0] };
  }
  return detected;
}

/** The suite's shape in unittest: a skip and an expected failure, a failure in a second class. */
const UNITTEST_SUITE = (base, importLine) => `import unittest
${importLine}

class MathTests(${base}):
    def test_adds(self):
        self.assertEqual(1 + 1, 2)

    def test_subtracts(self):
        self.assertEqual(3 - 1, 2)

    def test_multiplies(self):
        self.assertEqual(2 * 3, 6)

    @unittest.skip("rounding is not settled")
    def test_rounds(self):
        self.assertEqual(round(2.5), 3)

    @unittest.expectedFailure
    def test_floors(self):
        raise NotImplementedError


class DivisionTests(${base}):
    def test_divides(self):
        self.assertEqual(6 / 3, 3)
`;

/** unittest names a test `test_x (module.Class)`, and from Python 3.11 `(module.Class.test_x)`. */
function unittestName(pythonVersion, method, testClass) {
  const [major, minor] = pythonVersion.split(".").map(Number);
  const long = major > 3 || (major === 3 && minor >= 11);
  return `${method} (${testClass}${long ? `.${method}` : ""})`;
}

// An expected failure is counted apart, as unittest's summary does (`expected failures=1`).
async function unittestFixtures(workDirectory) {
  const found = await pythonWith("unittest", "Debian: apt-get install python3");
  if (found.missing) {
    return {
      fixtures: [],
      skipped: [{ runner: "unittest", reason: found.missing, probe: found.probe }],
    };
  }
  const cwd = path.join(workDirectory, "unittest");
  await writeTree(cwd, { "test_math.py": UNITTEST_SUITE("unittest.TestCase", "") });
  const environment = { PYTHONDONTWRITEBYTECODE: "1" };
  return runVariants({
    runner: "unittest",
    version: found.version,
    cwd,
    expected: {
      passed: 3,
      failed: 1,
      skipped: 1,
      xfailed: 1,
      failures: [unittestName(found.version, "test_divides", "test_math.DivisionTests")],
    },
    variants: [
      { name: "verbose", command: found.python, args: ["-m", "unittest", "-v"], environment },
    ],
  });
}

async function djangoFixtures(workDirectory) {
  const found = await pythonWith("django", "Debian: apt-get install python3-django");
  if (found.missing) {
    return {
      fixtures: [],
      skipped: [{ runner: "django", reason: found.missing, probe: found.probe }],
    };
  }
  const cwd = path.join(workDirectory, "django");
  await writeTree(cwd, {
    "settings.py": 'SECRET_KEY = "x"\nINSTALLED_APPS = ["app"]\nUSE_TZ = True\n',
    "app/__init__.py": "",
    "app/tests.py": UNITTEST_SUITE("SimpleTestCase", "from django.test import SimpleTestCase"),
  });
  const environment = { PYTHONDONTWRITEBYTECODE: "1" };
  return runVariants({
    runner: "django",
    version: found.version,
    cwd,
    expected: {
      runner: "unittest",
      passed: 3,
      failed: 1,
      skipped: 1,
      xfailed: 1,
      failures: [unittestName(found.version, "test_divides", "app.tests.DivisionTests")],
    },
    variants: [
      {
        name: "verbose",
        command: found.python,
        args: ["-m", "django", "test", "--settings=settings", "--verbosity", "2", "app"],
        environment,
      },
    ],
  });
}

async function sympyFixtures(workDirectory) {
  const found = await pythonWith("sympy", "Debian: apt-get install python3-sympy");
  if (found.missing) {
    return {
      fixtures: [],
      skipped: [{ runner: "sympy", reason: found.missing, probe: found.probe }],
    };
  }
  const cwd = path.join(workDirectory, "sympy");
  await writeTree(cwd, {
    "test_math.py": `from sympy.testing.pytest import skip, XFAIL


def test_adds():
    assert 1 + 1 == 2


def test_subtracts():
    assert 3 - 1 == 2


def test_multiplies():
    assert 2 * 3 == 6


def test_rounds():
    skip("rounding is not settled")


@XFAIL
def test_floors():
    raise NotImplementedError


def test_divides():
    assert 6 / 3 == 3
`,
    // What bin/test does: sympy's runner and reporter, verbose and without colour (-C).
    "run.py": `import sys
from sympy.testing.runtests import SymPyTests, PyTestReporter
tests = SymPyTests(PyTestReporter(verbose=True, colors=False))
tests._testfiles.append("test_math.py")
sys.exit(0 if tests.test(sort=True) else 1)
`,
  });
  return runVariants({
    runner: "sympy",
    version: found.version,
    cwd,
    // An expected failure is counted apart (`1 expected to fail`); sympy does not nest tests.
    expected: { passed: 3, failed: 1, skipped: 1, xfailed: 1, failures: ["test_divides"] },
    variants: [
      {
        name: "verbose",
        command: found.python,
        args: ["run.py"],
        environment: { PYTHONDONTWRITEBYTECODE: "1" },
      },
    ],
  });
}

async function cargoFixtures(workDirectory) {
  const detected = await detect("cargo", ["--version"], "Debian: apt-get install cargo");
  if (detected.missing) {
    return {
      fixtures: [],
      skipped: [{ runner: "cargo", reason: detected.missing, probe: detected.probe }],
    };
  }
  const cwd = path.join(workDirectory, "cargo");
  // Three test binaries (unit, integration, doc-tests) so the parser has to sum their summaries.
  await writeTree(cwd, {
    "Cargo.toml": `[package]
name = "runner_fixture"
version = "0.1.0"
edition = "2021"

[dependencies]
`,
    "src/lib.rs": `/// Adds two numbers.
///
/// \`\`\`
/// assert_eq!(runner_fixture::add(1, 1), 2);
/// \`\`\`
pub fn add(left: i64, right: i64) -> i64 {
    left + right
}

pub fn divide(left: i64, right: i64) -> i64 {
    left / right
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 1), 2);
    }

    #[test]
    fn subtracts() {
        assert_eq!(add(3, -1), 2);
    }

    #[test]
    #[ignore = "rounding is not settled"]
    fn rounds() {}

    mod division {
        use super::super::divide;

        #[test]
        fn divides() {
            assert_eq!(divide(6, 3), 3);
        }
    }
}
`,
    "tests/integration.rs": `#[test]
fn multiplies() {
    assert_eq!(runner_fixture::add(2, 2), 4);
}
`,
  });
  const args = ["test", "--offline", "--no-fail-fast"];
  return runVariants({
    runner: "cargo",
    version: detected.version.replace(/^cargo\s+/, ""),
    cwd,
    expected: { passed: 4, failed: 1, skipped: 1, failures: ["tests::division::divides"] },
    variants: [
      { name: "default", command: "cargo", args: [...args, "--color=never"] },
      // The first flag colours cargo's own messages, the second the test harness's.
      {
        name: "color",
        command: "cargo",
        args: [...args, "--color=always", "--", "--color=always"],
      },
      // `--skip` filters `subtracts` out of the unit tests: cargo's `1 filtered out`.
      {
        name: "skip",
        command: "cargo",
        args: [...args, "--color=never", "--", "--skip", "subtracts"],
        expected: {
          passed: 3,
          failed: 1,
          skipped: 1,
          deselected: 1,
          failures: ["tests::division::divides"],
        },
      },
    ],
  });
}

async function goFixtures(workDirectory) {
  const detected = await detect("go", ["version"], "Debian: apt-get install golang-go");
  if (detected.missing) {
    return {
      fixtures: [],
      skipped: [{ runner: "go", reason: detected.missing, probe: detected.probe }],
    };
  }
  const cwd = path.join(workDirectory, "go");
  await writeTree(cwd, {
    "go.mod": "module example.com/fixture\n\ngo 1.19\n",
    "calc/calc.go": "package calc\n\nfunc Add(left, right int) int { return left + right }\n",
    "calc/calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 1) != 2 {
		t.Fatal("1 + 1 should be 2")
	}
}

func TestTable(t *testing.T) {
	cases := []struct {
		name              string
		left, right, want int
	}{{"small", 1, 2, 3}, {"large", 100, 200, 300}}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.left, c.right); got != c.want {
				t.Fatalf("Add(%d, %d) = %d, want %d", c.left, c.right, got, c.want)
			}
		})
	}
}
`,
    "shapes/shapes.go":
      "package shapes\n\nfunc Perimeter(width, height int) int { return 2 * (width + height) }\n",
    "shapes/shapes_test.go": `package shapes

import "testing"

func TestArea(t *testing.T) {
	if 2*3 != 6 {
		t.Fatal("2 * 3 should be 6")
	}
}

func TestPerimeter(t *testing.T) {
	if got := Perimeter(1, 1); got != 5 {
		t.Errorf("Perimeter(1, 1) = %d, want 5", got)
	}
}

func TestVolume(t *testing.T) {
	t.Skip("volume is not settled")
}
`,
    "util/util.go": "package util\n\nfunc Double(value int) int { return 2 * value }\n",
  });
  // Offline and self-contained: no toolchain download, no module proxy, caches under our cache.
  const environment = {
    GOTOOLCHAIN: "local",
    GOPROXY: "off",
    GOFLAGS: "",
    GOWORK: "off",
    GO111MODULE: "on",
    GOCACHE: path.join(cacheRoot, "go-build"),
    GOPATH: path.join(cacheRoot, "gopath"),
  };
  return runVariants({
    runner: "go",
    version: detected.version.replace(/^go version\s+/, ""),
    cwd,
    expected: { passed: 5, failed: 1, skipped: 1, failures: ["TestPerimeter"] },
    variants: [
      { name: "verbose", command: "go", args: ["test", "-count=1", "-v", "./..."], environment },
      {
        // Without -v go prints only failing tests and package lines, so passes are unknowable.
        name: "quiet",
        command: "go",
        args: ["test", "-count=1", "./..."],
        environment,
        expected: { failed: 1, failures: ["TestPerimeter"] },
      },
    ],
  });
}

/** This script, Node's version and the devDependency runners' versions: what a fixture depends on. */
async function scriptFingerprint() {
  const hash = createHash("sha256")
    .update(await readFile(scriptPath))
    .update(process.version);
  for (const runner of ["vitest", "jest", "mocha"]) {
    hash.update(`${runner}@${(await devDependencyRunner(runner)).version ?? "missing"}`);
  }
  return hash.digest("hex");
}

async function manifestIsCurrent(fingerprint) {
  let manifest;
  try {
    manifest = JSON.parse(await readFile(manifestPath, "utf8"));
  } catch {
    return false;
  }
  if (manifest.fingerprint !== fingerprint) return false;
  if (!manifest.fixtures.every((fixture) => existsSync(path.join(outputDirectory, fixture.file)))) {
    return false;
  }
  // A runner installed since the last run should get its fixtures without needing --force.
  for (const { probe } of manifest.skipped) {
    if (!probe) continue;
    const result = await run(probe.command, probe.args);
    if (!result.missing && result.exitCode === 0) return false;
  }
  return true;
}

async function main() {
  const force = process.argv.includes("--force");
  const fingerprint = await scriptFingerprint();
  if (!force && (await manifestIsCurrent(fingerprint))) {
    console.log(`runner fixtures are current: ${path.relative(repositoryRoot, manifestPath)}`);
    return;
  }
  const startedAt = Date.now();
  await rm(outputDirectory, { recursive: true, force: true });
  await mkdir(outputDirectory, { recursive: true });
  await mkdir(cacheRoot, { recursive: true });
  const workDirectory = await mkdtemp(path.join(tmpdir(), "pleach-runner-fixtures-"));
  try {
    // Groups run in parallel; variants inside a group share a project and run one after another.
    const uvuInstallation = installNpmPackages([["uvu", UVU_VERSION]]);
    const groups = await Promise.all([
      nodeFixtures(workDirectory),
      vitestFixtures(workDirectory),
      jestFixtures(workDirectory),
      mochaFixtures(workDirectory),
      uvuInstallation.then((installation) => uvuFixtures(workDirectory, installation)),
      pytestFixtures(workDirectory),
      unittestFixtures(workDirectory),
      djangoFixtures(workDirectory),
      sympyFixtures(workDirectory),
      cargoFixtures(workDirectory),
      goFixtures(workDirectory),
    ]);
    const fixtures = groups.flatMap((group) => group.fixtures);
    const skipped = groups.flatMap((group) => group.skipped);
    const manifest = { fingerprint, generatedAt: new Date().toISOString(), fixtures, skipped };
    // Written last, so a half-finished run never looks current.
    await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    for (const fixture of fixtures) {
      console.log(`wrote ${fixture.file} (${fixture.runner} ${fixture.runnerVersion})`);
    }
    for (const entry of skipped) console.log(`skipped ${entry.runner}: ${entry.reason}`);
    console.log(`done in ${((Date.now() - startedAt) / 1000).toFixed(1)}s`);
  } finally {
    await rm(workDirectory, { recursive: true, force: true });
  }
}

await main();
