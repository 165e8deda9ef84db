import type { TestRunnerName } from "./test-runner-counts.js";

/**
 * What became of one test: it passed, failed (an assertion), errored (an exception, a fixture or
 * setup that broke), was skipped, failed as expected (`xfail`, TAP's `not ok # TODO`) or passed
 * though expected to fail (`xpass`, TAP's `ok # TODO`).
 */
export type TestStatus = "passed" | "failed" | "skipped" | "error" | "xfail" | "xpass";

/** One line's verdict on one test, as the runner named it. */
export interface TestVerdict {
  name: string;
  status: TestStatus;
  /** The runner whose line it was. */
  runner: TestRunnerName;
}

/** Where scanners send each test's verdict, in the order the output printed them. */
export type RecordVerdict = (verdict: TestVerdict) => void;

/** Each test's latest status: when a name appears twice (`-v` and `-rA`), the later line wins. */
export function latestStatuses(verdicts: readonly TestVerdict[]): Map<string, TestStatus> {
  const statuses = new Map<string, TestStatus>();
  for (const { name, status } of verdicts) statuses.set(name, status);
  return statuses;
}
