import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { sumCounts, type Tally } from "./tally.js";

const NEXTEST_SUMMARY = /^\s*Summary \[[^\]]*\] (?:\d+\/)?\d+ tests? run: (.*)$/;
const NEXTEST_COUNT = /^(\d{1,15}) ([a-z]+(?: [a-z]+)?)$/;
const NEXTEST_FAILURE =
  /^\s*(?:FAIL|TIMEOUT|ABORT|LEAK-FAIL|SIG[A-Z]+) \[[^\]]*\] (?:\(\d+\/\d+\) )?(\S.*)$/;

/**
 * Parses nextest's `Summary [ 0.010s] 5 tests run: 4 passed (1 slow), 1 failed, 1 skipped`.
 * Parenthesised notes qualify the passes and a `;` starts a cancellation note; both are dropped.
 */
function parseNextestSummary(line: string): Tally | undefined {
  const body = NEXTEST_SUMMARY.exec(line)?.[1];
  if (body === undefined) return undefined;
  const counts = (body.split(";")[0] as string).replace(/\([^()]*\)/g, "");
  const parts = counts.split(",").map((part) => part.trim());
  return sumCounts(parts, NEXTEST_COUNT, (word) => {
    if (word === "passed" || word === "skipped") return word;
    if (word === "failed" || word === "exec failed" || word === "timed out") return "failed";
    return undefined;
  });
}

/** cargo nextest: its `Summary` line, failing tests by their `FAIL [ 0.003s] crate test` line. */
export class NextestScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();

  summary({ text, index }: OutputLine): boolean {
    return this.#summaries.recordFound(parseNextestSummary(text), index);
  }

  detail({ text }: OutputLine): boolean {
    const failure = NEXTEST_FAILURE.exec(text);
    if (failure) this.#failures.add(failure[1] as string);
    return failure !== null;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("nextest", this.#failures.names);
  }
}
