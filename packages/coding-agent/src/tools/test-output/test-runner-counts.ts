/** The test runners whose output `parseTestRunnerOutput` recognises. */
export type TestRunnerName =
  | "jest"
  | "vitest"
  | "pytest"
  | "cargo"
  | "nextest"
  | "go"
  | "node"
  | "mocha"
  | "uvu"
  | "unittest"
  | "sympy"
  | "tap";

/**
 * What a test run's output says about its outcome. Every field is optional because the parser
 * reports only what the output shows: `undefined` means "no signal", never "no tests".
 */
export interface TestRunnerCounts {
  /** Tests that passed. */
  passed?: number;
  /**
   * Tests that failed, timed out or were cancelled, and errored ones where the runner does not
   * count errors apart (see `errors`).
   */
  failed?: number;
  /**
   * Tests that did not run to a verdict: skipped, ignored and pending (mocha's), and todo where
   * the runner does not count todo apart (see `todo`).
   */
  skipped?: number;
  /** Tests marked todo, where the runner counts them apart from skipped (jest, vitest, node:test). */
  todo?: number;
  /** Expected failures that failed, as expected (pytest's xfailed, unittest's expected failures). */
  xfailed?: number;
  /** Expected failures that passed (pytest's xpassed, unittest's unexpected successes). */
  xpassed?: number;
  /** Tests that errored outside their assertions, where the runner counts them apart (pytest, unittest). */
  errors?: number;
  /** Tests the selection left out (pytest's deselected, cargo's filtered out). */
  deselected?: number;
  /**
   * Names of failing tests as the runner prints them (`math › division › divides`,
   * `tests/test_x.py::test_y`, `TestPerimeter`), first seen first, without duplicates. At most
   * {@link MAX_FAILURE_NAMES} names of at most {@link MAX_FAILURE_NAME_LENGTH} characters each.
   * Absent when no failing name was recognised.
   */
  failures?: string[];
  /**
   * The runner whose summary appeared first. `tap` covers any TAP producer, `node --test
   * --test-reporter=tap` included; `node` is the node:test spec reporter.
   */
  runner?: TestRunnerName;
}

/** The most failing test names `parseTestRunnerOutput` returns. */
export const MAX_FAILURE_NAMES = 100;

/** The longest failing test name `parseTestRunnerOutput` returns; longer ones are cut. */
export const MAX_FAILURE_NAME_LENGTH = 200;
