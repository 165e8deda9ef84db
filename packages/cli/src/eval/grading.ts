import { parseTestStatuses } from "@pleach/coding-agent/tools";
import type { EvalInstance } from "./instances.js";

/** Which of a list's tests passed; a test the output does not name counts as failed. */
export interface TestListOutcome {
  passed: string[];
  failed: string[];
}

/** How an instance's tests came out, and whether that resolves it. */
export interface Grade {
  FAIL_TO_PASS: TestListOutcome;
  PASS_TO_PASS: TestListOutcome;
  /** Every FAIL_TO_PASS and PASS_TO_PASS test passed. */
  resolved: boolean;
}

/** Grades an instance the way SWE-bench does, from its test command's output. */
export function gradeInstance(instance: EvalInstance, testOutput: string): Grade {
  const statuses = parseTestStatuses(testOutput);
  const split = (names: string[]): TestListOutcome => ({
    passed: names.filter((name) => statuses.get(name) === "pass"),
    failed: names.filter((name) => statuses.get(name) !== "pass"),
  });
  const failToPass = split(instance.FAIL_TO_PASS);
  const passToPass = split(instance.PASS_TO_PASS);
  return {
    FAIL_TO_PASS: failToPass,
    PASS_TO_PASS: passToPass,
    resolved: failToPass.failed.length === 0 && passToPass.failed.length === 0,
  };
}
