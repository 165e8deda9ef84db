import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { addTo, type Tally } from "./tally.js";
import type { RecordVerdict } from "./test-verdicts.js";

const CARGO_TEST_LINE = /^test (.+?) \.\.\. (ok|FAILED|ignored)(?:, .*)?$/;
const CARGO_RESULT =
  /^test result: [A-Za-z]+\. (\d{1,15}) passed; (\d{1,15}) failed; (\d{1,15}) ignored;(?: \d{1,15} measured; (\d{1,15}) filtered out;)?/;

/**
 * cargo test: one `test result:` line per test binary, each test's verdict and the failing tests
 * by `test x ... ok`, `test x ... FAILED`, `test x ... ignored`.
 */
export class CargoScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  readonly #record: RecordVerdict;

  constructor(record: RecordVerdict) {
    this.#record = record;
  }

  summary({ text, index }: OutputLine): boolean {
    const result = CARGO_RESULT.exec(text);
    if (!result) return false;
    const [, passed, failed, ignored, filtered] = result;
    const tally: Tally = {
      passed: Number(passed),
      failed: Number(failed),
      skipped: Number(ignored),
    };
    addTo(tally, "deselected", Number(filtered ?? 0));
    this.#summaries.record(tally, index);
    return true;
  }

  detail({ text }: OutputLine): boolean {
    const line = CARGO_TEST_LINE.exec(text);
    if (!line) return false;
    const name = line[1] as string;
    const word = line[2];
    if (word === "FAILED") this.#failures.add(name);
    const status = word === "ok" ? "passed" : word === "FAILED" ? "failed" : "skipped";
    this.#record({ name, status, runner: "cargo" });
    return true;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("cargo", this.#failures.names);
  }
}
