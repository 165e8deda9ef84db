import { stripAnsi } from "./ansi.js";
import { CargoScanner } from "./cargo.js";
import { GoScanner } from "./go.js";
import { JestScanner } from "./jest.js";
import { MochaScanner } from "./mocha.js";
import { NameList } from "./name-list.js";
import { NextestScanner } from "./nextest.js";
import { NodeSpecScanner } from "./node-spec.js";
import { PytestScanner } from "./pytest.js";
import type { OutputLine, RunnerReport, RunnerScanner } from "./runner-scanner.js";
import { SympyScanner } from "./sympy.js";
import { COUNT_CATEGORIES } from "./tally.js";
import { TapScanner } from "./tap.js";
import type { TestRunnerCounts } from "./test-runner-counts.js";
import type { RecordVerdict, TestVerdict } from "./test-verdicts.js";
import { UnittestScanner } from "./unittest.js";
import { UvuScanner } from "./uvu.js";
import { VitestScanner } from "./vitest.js";

export type { TestRunnerCounts } from "./test-runner-counts.js";
export { MAX_FAILURE_NAME_LENGTH, MAX_FAILURE_NAMES } from "./test-runner-counts.js";
export type { TestStatus, TestVerdict } from "./test-verdicts.js";
export { latestStatuses } from "./test-verdicts.js";

const LINE_BREAK = /\r\n|\n|\r/;

/**
 * One scanner per runner, in the order each round offers them a line. A line can look like two
 * runners' (nextest's `FAIL [` starts like jest's `FAIL `, which vitest prints too), so the order
 * is part of the grammar; TAP, the loosest, comes last.
 */
function createScanners(record: RecordVerdict): RunnerScanner[] {
  return [
    new GoScanner(),
    new MochaScanner(),
    new NextestScanner(),
    // Before jest and vitest, which read `FAIL ` lines too; uvu's shape is narrower.
    new UvuScanner(),
    new JestScanner(),
    new VitestScanner(),
    new PytestScanner(record),
    // Before unittest: libtest's `test x ... ok` has unittest's shape.
    new CargoScanner(record),
    new UnittestScanner(record),
    new SympyScanner(record),
    new NodeSpecScanner(),
    new TapScanner(record),
  ];
}

/** Offers `line` to each scanner in turn, round by round, until one takes it. */
function scanLine(scanners: readonly RunnerScanner[], line: OutputLine): void {
  for (const scanner of scanners) if (scanner.claim?.(line)) return;
  for (const scanner of scanners) if (scanner.summary?.(line)) return;
  for (const scanner of scanners) if (scanner.detail?.(line)) return;
}

/** Adds the runners' reports up, the earliest runner first; see {@link parseTestRunnerOutput}. */
function combine(found: RunnerReport[]): TestRunnerCounts {
  // nextest echoes a failing test's libtest output, and older versions do so unindented, so
  // its `test result:` lines would count each failure twice: nextest's summary wins.
  const reports = found.some((report) => report.runner === "nextest" && report.tally)
    ? found.filter((report) => report.runner !== "cargo")
    : found;
  reports.sort((left, right) => left.firstLine - right.firstLine);
  const first = reports[0];
  if (first === undefined) return {};
  const result: TestRunnerCounts = { runner: first.runner };
  const failures = new NameList();
  for (const report of reports) {
    for (const category of COUNT_CATEGORIES) {
      const count = report.tally?.[category];
      if (count !== undefined) result[category] = (result[category] ?? 0) + count;
    }
    for (const name of report.failures) failures.add(name);
  }
  if (failures.names.length > 0) result.failures = failures.names;
  return result;
}

/** What a test run's output says: its counts, and each test's verdict. */
export interface TestOutputReading {
  /** See {@link parseTestRunnerOutput}. */
  counts: TestRunnerCounts;
  /**
   * Every line's verdict on a named test, in the order printed (pytest `-rA` and `-v`, unittest
   * and django `--verbosity 2`, sympy `--verbose`, cargo test and TAP), whether or not a summary
   * appeared; {@link latestStatuses} gives each test's last.
   */
  verdicts: TestVerdict[];
}

/**
 * Reads a test run's stdout and stderr once, for both the counts `run_tests` reports and the
 * per-test verdicts `pleach eval` grades by.
 */
export function readTestOutput(output: string): TestOutputReading {
  const verdicts: TestVerdict[] = [];
  const scanners = createScanners((verdict) => verdicts.push(verdict));
  const lines = stripAnsi(output).split(LINE_BREAK);
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index] as string;
    scanLine(scanners, { text, trimmed: text.trim(), index });
  }
  const reports: RunnerReport[] = [];
  for (const scanner of scanners) {
    const report = scanner.finish();
    if (report !== undefined) reports.push(report);
  }
  return { counts: combine(reports), verdicts };
}

/**
 * Reads the counts and failing test names out of a test run's stdout and stderr. Best effort
 * over the summaries of jest, vitest, pytest, cargo test, cargo nextest, go test, node --test
 * (spec and TAP reporters), mocha (its TAP reporter too), uvu, unittest (and django's runner),
 * sympy's runner and any TAP producer; colour codes are ignored, and the work is one pass that
 * stays linear in the size of the output.
 *
 * Counts are never invented: when no summary is recognised, `passed`, `failed` and `skipped` are
 * all `undefined` ("no signal"), never 0. When a runner's summary is recognised, all three are
 * numbers: a category that runner leaves out when it is zero (jest and vitest omit `failed` and
 * `skipped`, mocha `pending` and `failing`, pytest any outcome it did not see) is reported as 0,
 * because that runner's grammar says so. The one exception is `go test` without `-v`, which
 * prints failing tests but never passing or skipped ones: there only `failed` is set. Package
 * lines alone (`ok  pkg`, `FAIL pkg`) give no counts, though a package that failed without
 * naming a test (a build error) is listed in `failures` by its import path.
 *
 * Categories are the runner's own where it reports them apart: jest's, vitest's and node:test's
 * `todo`, pytest's, unittest's and sympy's
 * expected failures (`xfailed`), unexpected successes (`xpassed`) and errors (`errors`), pytest's
 * `deselected` and cargo's `filtered out` (`deselected`), each absent unless the runner counted
 * one or more. Otherwise skipped, ignored, pending (mocha's) and todo count as `skipped`; exceptions,
 * cancelled, timed-out and exec-failed tests as `failed`; uvu's failed tests are its `Total`
 * (tests run) minus its `Passed`. Several summaries (cargo prints one
 * per test binary, doc-tests included; a workspace may run a runner per package) are summed.
 * go's counts are its `--- PASS`, `--- FAIL` and `--- SKIP` lines, subtests and their parents
 * each counting once. Failing names are reported only for runners whose summary (or, for go,
 * whose package lines) appeared, so a stray `FAILED` in unrelated output names nothing.
 *
 * @example
 * ```ts
 * parseTestRunnerOutput("===== 1 failed, 3 passed in 0.05s =====");
 * // { runner: "pytest", passed: 3, failed: 1, skipped: 0 }
 * ```
 */
export function parseTestRunnerOutput(output: string): TestRunnerCounts {
  return readTestOutput(output).counts;
}
