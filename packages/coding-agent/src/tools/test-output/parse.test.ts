import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  MAX_FAILURE_NAME_LENGTH,
  MAX_FAILURE_NAMES,
  parseTestRunnerOutput,
  readTestOutput,
  type TestRunnerCounts,
} from "./parse.js";

const generatorPath = fileURLToPath(
  new URL("../../../../../scripts/gen-runner-fixtures.mjs", import.meta.url),
);
const generatedDirectory = new URL("./fixtures/generated/", import.meta.url);

interface GeneratedFixture {
  name: string;
  file: string;
  runner: string;
  runnerVersion: string;
  command: string;
  exitCode: number;
  expected: TestRunnerCounts;
}

interface Manifest {
  fixtures: GeneratedFixture[];
  skipped: Array<{ runner: string; reason: string }>;
}

// Every fixture the generator knows how to make; one the machine cannot make is skipped with
// the generator's reason rather than silently left out.
const generatedFixtureNames = [
  "node-spec",
  "node-spec-color",
  "node-tap",
  "vitest-default",
  "vitest-color",
  "vitest-verbose",
  "jest-default",
  "jest-color",
  "jest-verbose",
  "mocha-default",
  "mocha-color",
  "mocha-tap",
  "uvu-default",
  "uvu-color",
  "pytest-default",
  "pytest-deselect",
  "pytest-quiet",
  "pytest-verbose",
  "pytest-color",
  "unittest-verbose",
  "django-verbose",
  "sympy-verbose",
  "cargo-default",
  "cargo-color",
  "cargo-skip",
  "go-verbose",
  "go-quiet",
];

describe("parseTestRunnerOutput on real runner output", () => {
  let manifest: Manifest;

  beforeAll(async () => {
    // The generator exits at once when its manifest is current for this script and Node version;
    // otherwise it runs every installed runner, which takes a while on a cold npm cache.
    await promisify(execFile)(process.execPath, [generatorPath], {
      maxBuffer: 16 * 1024 * 1024,
    });
    manifest = JSON.parse(await readFile(new URL("manifest.json", generatedDirectory), "utf8"));
  }, 300_000);

  for (const name of generatedFixtureNames) {
    it(name, async (context) => {
      const fixture = manifest.fixtures.find((candidate) => candidate.name === name);
      if (!fixture) {
        const runner = name.slice(0, name.indexOf("-"));
        const skipped = manifest.skipped.find((entry) => entry.runner === runner);
        expect(skipped, `the generator neither wrote ${name} nor said why`).toBeDefined();
        context.skip(`${runner} fixture not generated: ${skipped?.reason}`);
        return;
      }
      const output = await readFile(new URL(fixture.file, generatedDirectory), "utf8");
      // The fixture projects always hold one failing test, so a zero exit means a broken fixture.
      expect(fixture.exitCode, `${fixture.command} exited 0`).not.toBe(0);
      expect(parseTestRunnerOutput(output)).toEqual(fixture.expected);
    });
  }

  it("nextest (hand-written from the documented format, see the file's header)", async () => {
    const output = await readFile(
      new URL("./fixtures/nextest-sample.txt", import.meta.url),
      "utf8",
    );
    expect(parseTestRunnerOutput(output)).toEqual({
      runner: "nextest",
      passed: 4,
      failed: 2,
      skipped: 1,
      failures: [
        "runner_fixture tests::division::divides",
        "runner_fixture::integration waits_forever",
      ],
    });
  });
});

describe("parseTestRunnerOutput grammars", () => {
  it("reports nothing at all when no runner's summary appears", () => {
    expect(parseTestRunnerOutput("")).toEqual({});
    expect(parseTestRunnerOutput("npm ERR! missing script: test\n")).toEqual({});
    // Fragments of summaries, failure markers without a summary, and prose are no signal.
    expect(
      parseTestRunnerOutput(
        [
          "3 passed",
          "FAILED tests/test_x.py::test_y - boom",
          "test foo ... FAILED",
          "not ok 1 - something",
          "  ● Suite › name",
          "  2 failing",
          "Tests: many passed",
          "Tests  3 passed",
          "Summary: 4 tests run",
        ].join("\n"),
      ),
    ).toEqual({});
  });

  describe("jest", () => {
    it("reports 0 for the categories jest leaves out when they are zero", () => {
      expect(parseTestRunnerOutput("Tests:       5 passed, 5 total\n")).toEqual({
        runner: "jest",
        passed: 5,
        failed: 0,
        skipped: 0,
      });
    });

    it("counts todo apart from skipped and names failures by their bullet", () => {
      const output = [
        "FAIL src/math.test.ts",
        "  ● Math › divides by zero",
        "",
        "    expect(received).toThrow()",
        "",
        "  ● Math › rounds",
        "",
        "Test Suites: 1 failed, 1 total",
        "Tests:       2 failed, 1 skipped, 2 todo, 3 passed, 8 total",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "jest",
        passed: 3,
        failed: 2,
        skipped: 1,
        todo: 2,
        failures: ["Math › divides by zero", "Math › rounds"],
      });
    });

    it("names the file when a suite failed to run, and ignores unindented warnings", () => {
      const output = [
        "● Validation Warning:",
        "FAIL src/broken.test.ts",
        "  ● Test suite failed to run",
        "",
        "    Cannot find module './missing'",
        "Tests:       0 total",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "jest",
        passed: 0,
        failed: 0,
        skipped: 0,
        failures: ["src/broken.test.ts"],
      });
    });
  });

  describe("vitest", () => {
    it("parses the pipe-separated summary, todo apart from skipped", () => {
      const output = [
        " Test Files  1 failed | 2 passed (3)",
        "      Tests  2 failed | 5 passed | 1 skipped | 1 todo (9)",
        "",
        " FAIL  src/a.test.ts > suite > first",
        " FAIL  src/a.test.ts > suite > second",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "vitest",
        passed: 5,
        failed: 2,
        skipped: 1,
        todo: 1,
        failures: ["src/a.test.ts > suite > first", "src/a.test.ts > suite > second"],
      });
    });

    it("reports 0 failed when everything passed", () => {
      expect(parseTestRunnerOutput("      Tests  5 passed (5)\n")).toEqual({
        runner: "vitest",
        passed: 5,
        failed: 0,
        skipped: 0,
      });
    });
  });

  describe("pytest", () => {
    it("parses the framed summary and the -q form", () => {
      const expected = { runner: "pytest", passed: 3, failed: 1, skipped: 2 };
      expect(parseTestRunnerOutput("===== 3 passed, 1 failed, 2 skipped in 0.05s =====\n")).toEqual(
        expected,
      );
      expect(parseTestRunnerOutput("3 passed, 1 failed, 2 skipped in 0.05s\n")).toEqual(expected);
    });

    it("keeps pytest's own categories: errors, xfailed, xpassed and deselected apart", () => {
      const line =
        "== 2 failed, 4 passed, 1 skipped, 3 deselected, 1 xfailed, 2 xpassed, 5 warnings, 1 error in 65.43s (0:01:05) ==";
      expect(parseTestRunnerOutput(line)).toEqual({
        runner: "pytest",
        passed: 4,
        failed: 2,
        skipped: 1,
        xfailed: 1,
        xpassed: 2,
        errors: 1,
        deselected: 3,
      });
    });

    it("reports zeros when pytest says no tests ran", () => {
      expect(parseTestRunnerOutput("============ no tests ran in 0.01s ============")).toEqual({
        runner: "pytest",
        passed: 0,
        failed: 0,
        skipped: 0,
      });
    });

    it("names failures and errors by node id, parameters with spaces included", () => {
      const output = [
        "FAILED tests/test_x.py::test_sum[1 - 2] - assert -1 == 3",
        "FAILED tests/test_x.py::TestY::test_z - AssertionError: a - b",
        "ERROR tests/test_db.py::test_connect - fixture 'db' not found",
        "ERROR tests/test_broken.py",
        "==== 2 failed, 1 passed, 2 errors in 0.31s ====",
      ].join("\n");
      expect(parseTestRunnerOutput(output).failures).toEqual([
        "tests/test_x.py::test_sum[1 - 2]",
        "tests/test_x.py::TestY::test_z",
        "tests/test_db.py::test_connect",
        "tests/test_broken.py",
      ]);
    });
  });

  describe("cargo test", () => {
    it("sums every test binary's result, doc-tests included", () => {
      const output = [
        "running 3 tests",
        "test tests::adds ... ok",
        "test tests::slow ... ignored",
        "test tests::parse::rejects_empty ... FAILED",
        "test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s",
        "running 2 tests",
        "test round_trip ... ok",
        "test big_input ... FAILED",
        "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s",
        "   Doc-tests my_crate",
        "running 1 test",
        "test src/lib.rs - add (line 3) ... ok",
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.20s",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "cargo",
        passed: 3,
        failed: 2,
        skipped: 1,
        failures: ["tests::parse::rejects_empty", "big_input"],
      });
    });
  });

  describe("cargo nextest", () => {
    it("drops notes in parentheses and counts timeouts and exec failures as failed", () => {
      const line =
        "     Summary [  15.750s] 8/10 tests run: 5 passed (1 slow, 1 flaky, 1 leaky), 2 failed, 1 exec failed, 1 timed out, 2 skipped";
      expect(parseTestRunnerOutput(line)).toEqual({
        runner: "nextest",
        passed: 5,
        failed: 4,
        skipped: 2,
      });
    });

    it("does not count the libtest output that older nextest echoes unindented", () => {
      const output = [
        "    Starting 2 tests across 1 binary",
        "        FAIL [   0.003s] my-crate tests::breaks",
        "",
        "--- STDOUT:              my-crate tests::breaks ---",
        "",
        "running 1 test",
        "test tests::breaks ... FAILED",
        "",
        "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s",
        "",
        "        PASS [   0.002s] my-crate tests::works",
        "------------",
        "     Summary [   0.010s] 2 tests run: 1 passed, 1 failed, 0 skipped",
        "        FAIL [   0.003s] my-crate tests::breaks",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "nextest",
        passed: 1,
        failed: 1,
        skipped: 0,
        failures: ["my-crate tests::breaks"],
      });
    });
  });

  describe("go test", () => {
    it("counts verbose result lines, subtests and their parents each once", () => {
      const output = [
        "=== RUN   TestParse",
        "=== RUN   TestParse/empty",
        "=== RUN   TestParse/unicode",
        "    parse_test.go:20: got 2, want 3",
        "--- FAIL: TestParse (0.00s)",
        "    --- PASS: TestParse/empty (0.00s)",
        "    --- FAIL: TestParse/unicode (0.00s)",
        "=== RUN   TestSlow",
        "--- SKIP: TestSlow (0.00s)",
        "FAIL",
        "FAIL\texample.com/parse\t0.004s",
        "=== RUN   TestOk",
        "--- PASS: TestOk (0.00s)",
        "PASS",
        "ok  \texample.com/other\t0.002s",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "go",
        passed: 2,
        failed: 2,
        skipped: 1,
        failures: ["TestParse", "TestParse/unicode"],
      });
    });

    it("invents no counts from package lines alone, but names a package that failed to build", () => {
      const output = [
        "ok  \texample.com/a\t0.010s",
        "ok  \texample.com/b\t(cached)",
        "?   \texample.com/c\t[no test files]",
        "# example.com/d",
        "d/d.go:3:2: undefined: missing",
        "FAIL\texample.com/d [build failed]",
        "FAIL",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "go",
        failures: ["example.com/d"],
      });
    });

    it("reports only failed without -v, where passes and skips are not printed", () => {
      const output = [
        "--- FAIL: TestPerimeter (0.00s)",
        "    shapes_test.go:13: Perimeter(1, 1) = 4, want 5",
        "FAIL",
        "FAIL\texample.com/shapes\t0.010s",
        "ok  \texample.com/calc\t0.015s",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "go",
        failed: 1,
        failures: ["TestPerimeter"],
      });
    });
  });

  describe("node --test", () => {
    it("reads the spec reporter's summary, cancelled as failed and todo apart", () => {
      const output = [
        "▶ parser",
        "  ✔ reads (0.5ms)",
        "  ✖ writes (1.2ms)",
        "  ✖ flushes (0.3ms) # TODO",
        "✖ parser (2.1ms)",
        "✖ top level (0.4ms)",
        "ℹ tests 6",
        "ℹ suites 1",
        "ℹ pass 1",
        "ℹ fail 2",
        "ℹ cancelled 1",
        "ℹ skipped 1",
        "ℹ todo 1",
        "ℹ duration_ms 12.5",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "node",
        passed: 1,
        failed: 3,
        skipped: 1,
        todo: 1,
        failures: ["writes", "top level"],
      });
    });

    it("reads TAP comments and names only leaf failures", () => {
      const output = [
        "TAP version 13",
        "# Subtest: outer",
        "    # Subtest: inner",
        "    not ok 1 - inner",
        "      ---",
        "      error: 'not ok 7 - this is YAML, not a test point'",
        "      ...",
        "    ok 2 - later # SKIP",
        "    not ok 3 - pending # TODO not written",
        "    1..3",
        "not ok 1 - outer",
        "  ---",
        "  type: 'suite'",
        "  ...",
        "1..1",
        "# tests 3",
        "# pass 0",
        "# fail 1",
        "# skipped 1",
        "# todo 1",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "tap",
        passed: 0,
        failed: 1,
        skipped: 1,
        todo: 1,
        failures: ["inner"],
      });
    });

    it("follows tap-parser's grammar: unheaded subtests, escapes and non-directive comments", () => {
      const output = [
        "TAP version 13",
        "    not ok 1 - leaf",
        "    1..1",
        "not ok 1 - parent of an unheaded subtest",
        "not ok 2 - uses \\# in its name",
        "not ok 3 - keeps # a comment that is no directive",
        "not ok 4 - skipped # skip not on this platform",
        "1..4",
        "# pass 0",
        "# fail 3",
      ].join("\n");
      // No `# skipped` count, so the `# skip` point is counted.
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "tap",
        passed: 0,
        failed: 3,
        skipped: 1,
        failures: ["leaf", "uses # in its name", "keeps # a comment that is no directive"],
      });
    });

    it("reads tape-style TAP with padded counts", () => {
      const output = [
        "not ok 2 should be equal",
        "",
        "1..3",
        "# tests 3",
        "# pass  2",
        "# fail  1",
      ];
      expect(parseTestRunnerOutput(output.join("\n"))).toEqual({
        runner: "tap",
        passed: 2,
        failed: 1,
        skipped: 0,
        failures: ["should be equal"],
      });
    });
  });

  describe("mocha", () => {
    it("reads passing, pending and failing, and joins a nested title with spaces", () => {
      const output = [
        "  api",
        "    1) rejects",
        "",
        "  3 passing (5ms)",
        "  2 pending",
        "  2 failing",
        "",
        "  1) api",
        "       users",
        "         rejects:",
        "     Error: boom",
        "",
        "  2) standalone:",
        "     Error: bang",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "mocha",
        passed: 3,
        failed: 2,
        skipped: 2,
        failures: ["api users rejects", "standalone"],
      });
    });

    it("reports 0 failed and skipped when only passing is printed", () => {
      expect(parseTestRunnerOutput("\n  12 passing (1s)\n\n")).toEqual({
        runner: "mocha",
        passed: 12,
        failed: 0,
        skipped: 0,
      });
    });
  });

  describe("uvu", () => {
    it("takes failed as total minus passed, and names failures suite > name", () => {
      const output = [
        "math.test.js",
        " math  • • ✘   (2 / 3)",
        "",
        '   FAIL  math  "divides"',
        "    Expected values to be strictly equal:  (is)",
        "",
        "strings.test.js",
        "✘   (0 / 1)",
        "",
        '   FAIL  "concatenates"',
        "",
        "  Total:     4",
        "  Passed:    2",
        "  Skipped:   1",
        "  Duration:  2.90ms",
        "",
      ].join("\n");
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "uvu",
        passed: 2,
        failed: 2,
        skipped: 1,
        failures: ["math > divides", "concatenates"],
      });
    });

    it("needs the four summary lines in a row", () => {
      const broken = ["  Total:     4", "  Passed:    2", "", "  Skipped:   1", "  Duration:  1ms"];
      expect(parseTestRunnerOutput(broken.join("\n"))).toEqual({});
      expect(
        parseTestRunnerOutput(
          "  Total:     4\n  Passed:    5\n  Skipped:   0\n  Duration:  1.00ms",
        ),
      ).toEqual({});
      expect(parseTestRunnerOutput('   FAIL  math  "divides"\n')).toEqual({});
    });
  });

  describe("colour and bounds", () => {
    it("ignores colour, cursor, charset and hyperlink escapes", () => {
      const output =
        "\u001b[1mTests:       \u001b[22m\u001b[1m\u001b[31m1 failed\u001b[39m\u001b[22m, \u001b[1m\u001b[32m4 passed\u001b(B\u001b[m, 5 total\r\u001b[2K\n" +
        "  \u001b]8;;file:///x\u0007\u001b[1m● \u001b[22mSuite › name\u001b]8;;\u0007\n";
      expect(parseTestRunnerOutput(output)).toEqual({
        runner: "jest",
        passed: 4,
        failed: 1,
        skipped: 0,
        failures: ["Suite › name"],
      });
    });

    it("deduplicates failing names and bounds their number and length", () => {
      const names = Array.from({ length: 150 }, (_, index) => `case_${index}`);
      const lines = [...names, ...names].map((name) => `FAILED t.py::${name} - boom`);
      lines.push(`FAILED t.py::${"x".repeat(500)}`, "== 300 failed in 1.00s ==");
      const result = parseTestRunnerOutput(lines.join("\n"));
      expect(result.failed).toBe(300);
      expect(result.failures).toHaveLength(MAX_FAILURE_NAMES);
      expect(new Set(result.failures).size).toBe(MAX_FAILURE_NAMES);
      expect(result.failures?.[0]).toBe("t.py::case_0");

      const long = parseTestRunnerOutput(`FAILED t.py::${"x".repeat(500)}\n== 1 failed in 1s ==`);
      expect(long.failures?.[0]).toHaveLength(MAX_FAILURE_NAME_LENGTH);
    });

    it("sums summaries across runners and reports the first runner seen", () => {
      const output = ["Tests:       2 passed, 2 total", "      Tests  1 failed | 3 passed (4)"];
      expect(parseTestRunnerOutput(output.join("\n"))).toEqual({
        runner: "jest",
        passed: 5,
        failed: 1,
        skipped: 0,
      });
    });

    it("stays usable on 10 MB of adversarial output", () => {
      // Shapes that make backtracking patterns quadratic: long runs with a summary's prefix and
      // a missing suffix, unterminated escapes, and one enormous line.
      const megabyte = 1024 * 1024;
      const output = [
        `Tests ${"1 passed | ".repeat(megabyte / 11)}`,
        `${" ".repeat(megabyte)}x`,
        "\u001b]".repeat(megabyte / 2),
        `== ${"1 passed, ".repeat(megabyte / 10)} in =`,
        "✖ x (".repeat(megabyte / 5),
        `FAILED a::b[${"[".repeat(megabyte)}`,
        "--- FAIL: TestX (0.00s)\n".repeat(megabyte / 24),
        `\u001b[${"1;".repeat(megabyte)}`,
        "#".repeat(megabyte),
        "not ok 1 - x # ".repeat(megabyte / 15),
        "      Tests  1 failed | 3 passed (4)",
      ].join("\n");
      expect(output.length).toBeGreaterThan(10 * megabyte);
      const result = parseTestRunnerOutput(output);
      expect(result.runner).toBe("go");
      expect(result.failures).toEqual(["TestX"]);
      expect(result.passed).toBe(3);
    });
  });
});

describe("parseTestRunnerOutput properties", () => {
  const isCount = (value: number | undefined) =>
    value === undefined || (Number.isInteger(value) && value >= 0);

  // Fragments of every grammar, so random inputs reach deep into the parser, not just its
  // "no signature" exit.
  const fragment = fc.constantFrom(
    "Tests:",
    "Tests ",
    " passed",
    " failed",
    " skipped",
    " todo",
    " total",
    ", ",
    " | ",
    "(3)",
    "=====",
    " in 0.1s",
    "test result: ok. ",
    "; ",
    "Summary [ 0.1s] ",
    " tests run: ",
    "--- FAIL: ",
    "--- PASS: ",
    "=== RUN ",
    "ok  \t",
    "FAIL\t",
    "ℹ pass ",
    "# fail ",
    "not ok 1 - ",
    "---",
    "...",
    "1..2",
    "  1) ",
    ":",
    " passing (2ms)",
    " failing",
    "✖ ",
    "▶ ",
    "● ",
    "FAILED ",
    "::",
    "[",
    "]",
    "\u001b[31m",
    "\u001b]8;;",
    "\u001b",
    "\n",
    "\r",
    "  ",
    "-1",
    "1e400",
    "99999999999999999999",
  );
  const digits = fc.integer({ min: 0, max: 100_000 }).map(String);
  const structured = fc.array(fc.oneof(fragment, digits, fc.string()), { maxLength: 60 });

  it("never throws and never reports a negative or fractional count", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 300 }),
          structured.map((parts) => parts.join("")),
        ),
        (output) => {
          const result = parseTestRunnerOutput(output);
          expect(isCount(result.passed)).toBe(true);
          expect(isCount(result.failed)).toBe(true);
          expect(isCount(result.skipped)).toBe(true);
          expect(result.failures === undefined || result.failures.length > 0).toBe(true);
          for (const name of result.failures ?? []) {
            expect(name.length).toBeLessThanOrEqual(MAX_FAILURE_NAME_LENGTH);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  const count = fc.nat({ max: 1_000_000 });

  it("never throws on TAP-shaped input, tap-parser's edge cases included", () => {
    const tapLine = fc.constantFrom(
      "ok 1 - a",
      "not ok 2 - b",
      "ok 3 - c {",
      "}",
      "    ok 1 - d",
      "        not ok 1 - e",
      "  ---",
      "  ...",
      "  message: x",
      "  key: [",
      "Bail out! boom",
      "pragma +strict",
      "TAP version 14",
      "# Subtest: s",
      "    # Subtest: t",
      "1..3",
      "    1..2",
      "1..0 # skip all",
      "# pass 1",
      "ok 4 # SKIP",
      "not ok 5 # TODO",
      "",
      "ok 99999999999999999999 - big",
      "ok 1 - x \\# y",
    );
    fc.assert(
      fc.property(
        fc.array(tapLine, { maxLength: 60 }).map((lines) => lines.join("\n")),
        (output) => {
          const { counts, verdicts } = readTestOutput(output);
          expect(counts.failures?.length ?? 0).toBeLessThanOrEqual(MAX_FAILURE_NAMES);
          expect(verdicts).toBeInstanceOf(Array);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("recovers the numbers of any pytest summary", () => {
    const categories = [
      "passed",
      "failed",
      "skipped",
      "deselected",
      "xfailed",
      "xpassed",
      "error",
      "warnings",
    ] as const;
    fc.assert(
      fc.property(
        fc.shuffledSubarray([...categories], { minLength: 1 }),
        fc.array(count, { minLength: categories.length, maxLength: categories.length }),
        fc.boolean(),
        (chosen, counts, framed) => {
          const value = (category: string) =>
            chosen.includes(category as (typeof categories)[number])
              ? (counts[categories.indexOf(category as (typeof categories)[number])] ?? 0)
              : 0;
          const body = `${chosen.map((category) => `${value(category)} ${category}`).join(", ")} in 1.23s`;
          const line = framed ? `======== ${body} ========` : body;
          // The categories only some runners report are absent at zero, as pytest leaves them out.
          const extra = (key: string, category: string) =>
            value(category) > 0 ? { [key]: value(category) } : {};
          expect(parseTestRunnerOutput(`collected 9 items\n${line}\n`)).toEqual({
            runner: "pytest",
            passed: value("passed"),
            failed: value("failed"),
            skipped: value("skipped"),
            ...extra("xfailed", "xfailed"),
            ...extra("xpassed", "xpassed"),
            ...extra("errors", "error"),
            ...extra("deselected", "deselected"),
          });
        },
      ),
    );
  });

  it("recovers the numbers of any jest summary", () => {
    fc.assert(
      fc.property(
        fc.option(count, { nil: undefined }),
        fc.option(count, { nil: undefined }),
        fc.option(count, { nil: undefined }),
        count,
        (failed, skipped, todo, passed) => {
          // jest prints parts in this order; an absent part and a printed zero must read the same.
          const parts = [
            failed === undefined ? undefined : `${failed} failed`,
            skipped === undefined ? undefined : `${skipped} skipped`,
            todo === undefined ? undefined : `${todo} todo`,
            `${passed} passed`,
          ].filter((part) => part !== undefined);
          const total = (failed ?? 0) + (skipped ?? 0) + (todo ?? 0) + passed;
          const line = `Tests:       ${parts.join(", ")}, ${total} total`;
          expect(parseTestRunnerOutput(`Test Suites: 1 passed, 1 total\n${line}\n`)).toEqual({
            runner: "jest",
            passed,
            failed: failed ?? 0,
            skipped: skipped ?? 0,
            // Like pytest's extra categories, todo is absent unless jest counted one or more.
            ...(todo ? { todo } : {}),
          });
        },
      ),
    );
  });

  it("recovers the sums of any series of cargo test results", () => {
    const binary = fc.record({ passed: count, failed: count, ignored: count, filtered: count });
    fc.assert(
      fc.property(fc.array(binary, { minLength: 1, maxLength: 8 }), (binaries) => {
        const output = binaries
          .map(
            ({ passed, failed, ignored, filtered }) =>
              `\nrunning ${passed + failed + ignored} tests\n\ntest result: ${failed > 0 ? "FAILED" : "ok"}. ${passed} passed; ${failed} failed; ${ignored} ignored; 0 measured; ${filtered} filtered out; finished in 0.01s\n`,
          )
          .join("");
        const sum = (key: "passed" | "failed" | "ignored" | "filtered") =>
          binaries.reduce((total, entry) => total + entry[key], 0);
        // cargo's `filtered out` is its deselected tests, absent when none were.
        expect(parseTestRunnerOutput(output)).toEqual({
          runner: "cargo",
          passed: sum("passed"),
          failed: sum("failed"),
          skipped: sum("ignored"),
          ...(sum("filtered") > 0 ? { deselected: sum("filtered") } : {}),
        });
      }),
    );
  });

  it("parses colourised output exactly as it parses the plain text", () => {
    const escapeSequence = fc.constantFrom(
      "\u001b[0m",
      "\u001b[1;31m",
      "\u001b[38;5;208m",
      "\u001b(B",
      "\u001b[2K",
      "\u001b]8;;https://example.com\u0007",
      "\u001b]0;title\u001b\\",
    );
    const plain = fc.constantFrom(
      "Tests:       1 failed, 2 passed, 3 total\n  ● a › b\n",
      "      Tests  1 failed | 4 passed (5)\n FAIL  x.test.ts > y\n",
      "FAILED t.py::test_a - x\n== 1 failed, 2 passed in 0.1s ==\n",
      "test a ... FAILED\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n",
      "--- FAIL: TestA (0.00s)\n=== RUN   TestB\n--- PASS: TestB (0.00s)\nFAIL\texample.com/a\t0.1s\n",
      "  2 passing (3ms)\n  1 failing\n\n  1) s\n       t:\n",
    );
    fc.assert(
      fc.property(
        plain,
        fc.array(fc.tuple(fc.nat(), escapeSequence), { maxLength: 20 }),
        (text, inserts) => {
          // Escapes go between characters of the plain text, never inside one another.
          const before = new Map<number, string>();
          for (const [position, sequence] of inserts) {
            const at = position % (text.length + 1);
            before.set(at, (before.get(at) ?? "") + sequence);
          }
          let coloured = "";
          for (let index = 0; index <= text.length; index++) {
            coloured += (before.get(index) ?? "") + text.slice(index, index + 1);
          }
          expect(parseTestRunnerOutput(coloured)).toEqual(parseTestRunnerOutput(text));
        },
      ),
    );
  });
});
