import { readTestOutput } from "@pleach/coding-agent/tools";
import type { EvalInstance } from "./instances.js";
import { type SweBenchStatus, sweBenchParser, sweBenchStatuses } from "./swe-bench.js";

/** Which of a list's tests passed (SWE-bench's `success`) and which did not (`failure`). */
export interface TestListOutcome {
  passed: string[];
  failed: string[];
}

/** How an instance's tests came out, and whether that resolves it. */
export interface Grade {
  /** `error`: the run timed out, or its output named no test at all (see `error`). */
  status: "resolved" | "unresolved" | "error";
  /** Every FAIL_TO_PASS test passed and every PASS_TO_PASS test passed or was skipped. */
  resolved: boolean;
  FAIL_TO_PASS: TestListOutcome;
  PASS_TO_PASS: TestListOutcome;
  /**
   * Each test's status as SWE-bench's log parser for the repository records it (the map its
   * `tests_status` is made from), the instance's tests and every other test the output named.
   */
  statuses: Record<string, SweBenchStatus>;
  /** Why the status is `error`. */
  error?: string;
}

/** What the instance's test command did. */
export interface TestRun {
  /** Its stdout and stderr. */
  output: string;
  /** It ran past its limit and was stopped. */
  timedOut: boolean;
  /** The limit, for the error's text. */
  timeoutMs: number;
}

/**
 * Grades an instance by SWE-bench's rules, from its test command's output read by the log parser
 * SWE-bench uses for the repository: a FAIL_TO_PASS test passes when it PASSED or failed as
 * expected (XFAIL); a PASS_TO_PASS test also when it was SKIPPED; a test the output does not name
 * (or names with a status the parser does not record, such as an unexpected pass) failed. A run
 * that timed out, or whose output names no test at all, is an error rather than a result.
 */
export function gradeInstance(instance: EvalInstance, run: TestRun): Grade {
  const statuses = sweBenchStatuses(
    readTestOutput(run.output).verdicts,
    sweBenchParser(instance.repo),
  );
  const split = (names: readonly string[], counts: (status?: SweBenchStatus) => boolean) => ({
    passed: names.filter((name) => counts(statuses.get(name))),
    failed: names.filter((name) => !counts(statuses.get(name))),
  });
  const passes = (status?: SweBenchStatus) => status === "PASSED" || status === "XFAIL";
  const failToPass = split(instance.FAIL_TO_PASS, passes);
  const passToPass = split(
    instance.PASS_TO_PASS,
    (status) => passes(status) || status === "SKIPPED",
  );
  const resolved = failToPass.failed.length === 0 && passToPass.failed.length === 0;
  const grade: Grade = {
    status: resolved ? "resolved" : "unresolved",
    resolved,
    FAIL_TO_PASS: failToPass,
    PASS_TO_PASS: passToPass,
    statuses: Object.fromEntries(statuses),
  };
  const error = run.timedOut
    ? `the test command ran past its ${run.timeoutMs / 1000} s limit and was stopped, so there is no result to grade; check that it runs in the repository by hand, and narrow it to the instance's test files`
    : statuses.size === 0
      ? "no test status found in the test output: the command must print each test's name and status the way the repository's runner does (pytest -rA or -v, django's runtests.py --verbosity 2, sympy's bin/test --verbose, unittest -v, TAP); check test_command or --test-command"
      : undefined;
  if (error === undefined) return grade;
  return { ...grade, status: "error", resolved: false, error };
}
