import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { addTo, type Tally } from "./tally.js";
import type { RecordVerdict, TestStatus } from "./test-verdicts.js";

const SEPARATOR = " ... ";
const RAN = /^Ran (\d{1,15}) tests? in \d+(?:\.\d+)?s$/;
const RESULT = /^(?:OK|FAILED)(?: \((.*)\))?$/;
const RESULT_PART = /^(failures|errors|skipped|expected failures|unexpected successes)=(\d{1,15})$/;

/** The status a verdict word of unittest's verbose output stands for. */
function unittestStatus(word: string): TestStatus | undefined {
  switch (word) {
    case "ok":
      return "passed";
    case "FAIL":
      return "failed";
    case "ERROR":
      return "error";
    case "expected failure":
      return "xfail";
    case "unexpected success":
      return "xpass";
    default:
      // `skipped 'reason'`
      return word === "skipped" || word.startsWith("skipped ") ? "skipped" : undefined;
  }
}

/**
 * Python's unittest with `-v` (and django's test runner, `--verbosity 2`): each test's verdict
 * from `name ... ok` (`FAIL`, `ERROR`, `skipped 'why'`, `expected failure`, `unexpected
 * success`), counts from `Ran 8 tests in 0.01s` and the `OK` or `FAILED (failures=1, ...)` line
 * after it. The name is what the line shows before ` ... `: `test_x (module.Class)`, or the first
 * line of the test's docstring, which unittest prints on a line of its own after the name. When
 * the test prints, its verdict comes alone on a later line (`ok`) and goes to the last name seen.
 */
export class UnittestScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  readonly #record: RecordVerdict;
  #ran: number | undefined;
  #pending: string | undefined;

  constructor(record: RecordVerdict) {
    this.#record = record;
  }

  summary({ trimmed, index }: OutputLine): boolean {
    const ran = RAN.exec(trimmed);
    if (ran) {
      this.#ran = Number(ran[1]);
      this.#pending = undefined;
      return true;
    }
    const total = this.#ran;
    const result = total === undefined ? null : RESULT.exec(trimmed);
    if (total === undefined || !result) return false;
    const counts = new Map<string, number>();
    for (const part of result[1] === undefined ? [] : result[1].split(", ")) {
      const found = RESULT_PART.exec(part);
      if (!found) return false;
      counts.set(found[1] as string, Number(found[2]));
    }
    const failed = counts.get("failures") ?? 0;
    const skipped = counts.get("skipped") ?? 0;
    const tally: Tally = { failed, skipped };
    addTo(tally, "errors", counts.get("errors") ?? 0);
    addTo(tally, "xfailed", counts.get("expected failures") ?? 0);
    addTo(tally, "xpassed", counts.get("unexpected successes") ?? 0);
    let others = 0;
    for (const count of counts.values()) others += count;
    tally.passed = Math.max(0, total - others);
    this.#summaries.record(tally, index);
    this.#ran = undefined;
    return true;
  }

  detail({ trimmed }: OutputLine): boolean {
    const separator = trimmed.indexOf(SEPARATOR);
    if (separator > 0) {
      const name = trimmed.slice(0, separator);
      const status = unittestStatus(
        trimmed.slice(trimmed.lastIndexOf(SEPARATOR) + SEPARATOR.length),
      );
      if (status === undefined) {
        this.#pending = name;
        return false;
      }
      this.#verdict(name, status);
      return true;
    }
    const pending = this.#pending;
    const status = pending === undefined ? undefined : unittestStatus(trimmed);
    if (pending === undefined || status === undefined) return false;
    this.#verdict(pending, status);
    return true;
  }

  #verdict(name: string, status: TestStatus): void {
    this.#pending = undefined;
    if (status === "failed" || status === "error") this.#failures.add(name);
    this.#record({ name, status, runner: "unittest" });
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("unittest", this.#failures.names);
  }
}
