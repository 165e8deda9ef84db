import { stripAnsi } from "./ansi.js";
import { pytestVerdict } from "./pytest.js";
import { isFailure, TapStream } from "./tap-stream.js";

/** A test's outcome: it ran and passed, or it ran and failed (errors included). */
export type TestStatus = "pass" | "fail";

const LINE_BREAK = /\r\n|\n|\r/;

/**
 * Each test's outcome by name, for outputs that name every test, passing ones included: TAP
 * (`ok 3 - name`, `not ok 4 - name`, subtests at any depth, read by tap-parser; skipped and todo
 * points are left out) and pytest (`PASSED path::name` with `-rA`, `path::name PASSED` with `-v`).
 * When a name appears twice, the later verdict wins.
 */
export function parseTestStatuses(output: string): Map<string, TestStatus> {
  const statuses = new Map<string, TestStatus>();
  const tap = new TapStream((point) => {
    const name = point.name.trim();
    if (point.skip || point.todo || name === "") return;
    statuses.set(name, isFailure(point) ? "fail" : "pass");
  });
  for (const line of stripAnsi(output).split(LINE_BREAK)) {
    const pytest = pytestVerdict(line.trim());
    if (pytest !== undefined) {
      statuses.set(pytest.nodeId, pytest.verdict === "PASSED" ? "pass" : "fail");
    } else {
      tap.write(line);
    }
  }
  tap.end();
  return statuses;
}
