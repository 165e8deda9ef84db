import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { addTo, type Tally, zeroTally } from "./tally.js";

const NEXTEST_SUMMARY = /^\s*Summary \[[^\]]*\] (?:\d+\/)?\d+ tests? run: (.*)$/;
const NEXTEST_COUNT = /^(\d{1,15}) ([a-z]+(?: [a-z]+)?)$/;
const NEXTEST_FAILURE =
  /^\s*(?:FAIL|TIMEOUT|ABORT|LEAK-FAIL|SIG[A-Z]+) \[[^\]]*\] (?:\(\d+\/\d+\) )?(\S.*)$/;

/**
 * Parses nextest's `Summary [ 0.010s] 5 tests run: 4 passed (1 slow), 1 failed, 1 skipped`.
 * Parenthesised notes qualify the passes and a `;` starts a cancellation note; both are dropped.
 */
export function parseNextestSummary(line: string): Tally | undefined {
  const body = NEXTEST_SUMMARY.exec(line)?.[1];
  if (body === undefined) return undefined;
  const counts = (body.split(";")[0] as string).replace(/\([^()]*\)/g, "");
  const tally = zeroTally();
  for (const part of counts.split(",")) {
    const match = NEXTEST_COUNT.exec(part.trim());
    if (!match) return undefined;
    const word = match[2];
    const count = Number(match[1]);
    if (word === "passed") addTo(tally, "passed", count);
    else if (word === "skipped") addTo(tally, "skipped", count);
    else if (word === "failed" || word === "exec failed" || word === "timed out") {
      addTo(tally, "failed", count);
    }
  }
  return tally;
}

/** cargo nextest: its `Summary` line, failing tests by their `FAIL [ 0.003s] crate test` line. */
export class NextestScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();

  summary({ text, index }: OutputLine): boolean {
    const tally = parseNextestSummary(text);
    if (tally) this.#summaries.record(tally, index);
    return tally !== undefined;
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
