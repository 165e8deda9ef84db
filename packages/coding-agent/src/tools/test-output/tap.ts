import { NameList } from "./name-list.js";
import { nodeTestCategory } from "./node-spec.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { single } from "./tally.js";
import { isFailure, TapStream, type TapTestPoint } from "./tap-stream.js";
import type { RecordVerdict, TestStatus } from "./test-verdicts.js";

const TAP_COUNT = /^# (pass|fail|cancelled|skipped|todo)\s+(\d{1,15})$/;
const SKIP_OR_TODO_COUNT = /^# (?:skipped|todo)\s/;

/** A test point's status: TAP's `# TODO` is an expected failure, `ok # TODO` an unexpected pass. */
function tapStatus(point: TapTestPoint): TestStatus {
  if (point.skip) return "skipped";
  if (point.todo) return point.ok ? "xpass" : "xfail";
  return point.ok ? "passed" : "failed";
}
const TEST_POINT = /^\s*(?:not )?ok \d+/;

/**
 * TAP, from node --test --test-reporter=tap, tape, mocha or any producer: counts from the `# pass
 * 3` comments they end with, failing tests and every test's verdict from the test points, through
 * tap-parser. A subtest's parent (its closing test point) is not a failing test itself. Producers
 * that count no skipped tests (mocha prints only `# pass` and `# fail`) get their `# SKIP` and
 * `# TODO` points counted as skipped.
 *
 * The scanner also claims the lines of a YAML diagnostics block, so that an error message quoted
 * there is not read as another runner's line.
 */
export class TapScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  readonly #stream: TapStream;
  #skipPoints = 0;
  #countsSkips = false;
  #lastTestPoint = -2;
  #yamlIndent: number | undefined;

  constructor(record: RecordVerdict) {
    this.#stream = new TapStream((point) => {
      if (isFailure(point) && !point.closingTestPoint) this.#failures.add(point.name);
      if (point.skip || point.todo) this.#skipPoints += 1;
      const name = point.name.trim();
      if (name !== "") record({ name, status: tapStatus(point), runner: "tap" });
    });
  }

  claim({ text, trimmed }: OutputLine): boolean {
    const yamlIndent = this.#yamlIndent;
    if (yamlIndent === undefined) return false;
    if (trimmed === "...") {
      this.#yamlIndent = undefined;
    } else if (trimmed !== "" && text.length - text.trimStart().length < yamlIndent) {
      // A YAML block is indented under its `---`; anything shallower means it was never closed.
      this.#yamlIndent = undefined;
      return false;
    }
    this.#stream.write(text);
    return true;
  }

  summary({ text, index }: OutputLine): boolean {
    const count = TAP_COUNT.exec(text);
    if (count) {
      if (SKIP_OR_TODO_COUNT.test(text)) this.#countsSkips = true;
      this.#summaries.record(single(nodeTestCategory(count[1] as string), Number(count[2])), index);
    }
    return count !== null;
  }

  detail({ text, trimmed, index }: OutputLine): boolean {
    this.#stream.write(text);
    if (TEST_POINT.test(text)) {
      this.#lastTestPoint = index;
      return true;
    }
    // Only a `---` right under a test point opens YAML diagnostics; elsewhere it is just text.
    if (trimmed === "---" && this.#lastTestPoint === index - 1) {
      this.#yamlIndent = text.length - text.trimStart().length;
    }
    return false;
  }

  finish(): RunnerReport | undefined {
    this.#stream.end();
    const report = this.#summaries.report("tap", this.#failures.names);
    if (report?.tally === undefined || this.#countsSkips) return report;
    return { ...report, tally: { ...report.tally, skipped: this.#skipPoints } };
  }
}
