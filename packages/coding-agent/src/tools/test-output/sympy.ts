import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { type CountCategory, sumCounts } from "./tally.js";
import type { RecordVerdict, TestStatus } from "./test-verdicts.js";

/** `test_name ok`, `test_name F`, `test_name why it was skipped s`, the file's last with `[OK]`. */
const VERDICT_LINE = /^(test_\w+)(?: .*)? (ok|F|E|f|X|s|w|K|T)(?: +\[(?:OK|FAIL)\])?$/;
const FINISHED = "tests finished:";
const DURATION = /,? ?in \d+(?:\.\d+)? seconds$/;
const COUNT = /^(\d{1,15}) (.+)$/;

const STATUS_OF_CODE: Record<string, TestStatus> = {
  ok: "passed",
  F: "failed",
  E: "error",
  f: "xfail",
  X: "xpass",
};

function sympyCategory(words: string): CountCategory | undefined {
  switch (words) {
    case "passed":
      return "passed";
    case "expected to fail but passed":
      return "xpassed";
    case "failed":
      return "failed";
    case "exceptions":
      return "errors";
    case "skipped":
      return "skipped";
    case "expected to fail":
      return "xfailed";
    default:
      return undefined;
  }
}

/**
 * sympy's own runner (`bin/test --verbose`, `sympy.test(verbose=True)`): each test's verdict from
 * `test_name ok` lines (`F` failed, `E` an exception, `f` expected to fail, `X` expected to fail
 * but passed; `s`, `w` slow, `K` interrupted and `T` timed out are skipped), counts from its
 * `tests finished: 3 passed, 1 failed, in 0.10 seconds` line, which it wraps at 80 columns.
 */
export class SympyScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  readonly #record: RecordVerdict;
  /** The summary read so far, while it waits for the line that ends it. */
  #summary: { text: string; lines: number } | undefined;

  constructor(record: RecordVerdict) {
    this.#record = record;
  }

  claim({ trimmed, index }: OutputLine): boolean {
    const summary = this.#summary;
    if (summary === undefined) return false;
    summary.text += ` ${trimmed}`;
    summary.lines += 1;
    this.#finishSummary(index);
    return true;
  }

  summary({ trimmed, index }: OutputLine): boolean {
    if (!trimmed.includes(FINISHED)) return false;
    const body = trimmed.replace(/^=+ */, "").replace(/ *=+$/, "");
    if (!body.startsWith(FINISHED)) return false;
    this.#summary = { text: body.slice(FINISHED.length), lines: 1 };
    this.#finishSummary(index);
    return true;
  }

  #finishSummary(index: number): void {
    const summary = this.#summary;
    if (summary === undefined) return;
    const text = summary.text.trim();
    if (!DURATION.test(text)) {
      if (summary.lines >= 3) this.#summary = undefined;
      return;
    }
    this.#summary = undefined;
    const parts = text.replace(DURATION, "").split(",");
    const counts = parts.map((part) => part.trim()).filter((part) => part !== "");
    const tally = sumCounts(counts, COUNT, sympyCategory);
    if (tally !== undefined) this.#summaries.record(tally, index);
  }

  detail({ trimmed }: OutputLine): boolean {
    const line = VERDICT_LINE.exec(trimmed);
    if (!line) return false;
    const name = line[1] as string;
    const status = STATUS_OF_CODE[line[2] as string] ?? "skipped";
    if (status === "failed" || status === "error") this.#failures.add(name);
    this.#record({ name, status, runner: "sympy" });
    return true;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("sympy", this.#failures.names);
  }
}
