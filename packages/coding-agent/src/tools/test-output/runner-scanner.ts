import type { Tally } from "./tally.js";
import { addTally, zeroTally } from "./tally.js";
import type { TestRunnerName } from "./test-runner-counts.js";

/** One line of a test run's output, colour codes removed. */
export interface OutputLine {
  /** The line without its line break. */
  text: string;
  /** `text` without leading and trailing white space. */
  trimmed: string;
  /** The line's 0-based position in the output. */
  index: number;
}

/** What one runner's lines said about a run. */
export interface RunnerReport {
  runner: TestRunnerName;
  /** The first line that showed this runner's summary: the earliest runner is reported. */
  firstLine: number;
  /** Its counts, summed over its summaries; undefined when it printed none. */
  tally: Tally | undefined;
  /** Its failing test names, first seen first. */
  failures: readonly string[];
}

/**
 * The reader of one runner's output. `parseTestRunnerOutput` hands each line to the scanners in
 * three rounds: first `claim` (a line inside a block that belongs to one runner, such as TAP's
 * YAML diagnostics), then `summary` (summary lines, the strongest evidence), then `detail`
 * (failing names and everything else). The first scanner that returns true takes the line and
 * no other sees it.
 */
export interface RunnerScanner {
  claim?(line: OutputLine): boolean;
  summary?(line: OutputLine): boolean;
  detail?(line: OutputLine): boolean;
  /** What the runner's lines said, once every line was read; undefined when none was its. */
  finish(): RunnerReport | undefined;
}

/** A runner's summaries, summed, and the line of the first. */
export class RunnerSummaries {
  #firstLine: number | undefined;
  #tally: Tally | undefined;

  /**
   * Adds one summary. A complete summary states all three categories, so the first one sets the
   * missing ones to 0: that runner leaves out a category only when it is zero.
   */
  record(tally: Tally, index: number, { complete = true }: { complete?: boolean } = {}): void {
    this.#firstLine ??= index;
    this.#tally ??= complete ? zeroTally() : {};
    addTally(this.#tally, tally);
  }

  /** Records `tally` when a summary line was recognised; returns whether one was. */
  recordFound(tally: Tally | undefined, index: number): boolean {
    if (tally !== undefined) this.record(tally, index);
    return tally !== undefined;
  }

  /** Ranks the runner by `index` without counting anything (go's package lines). */
  seen(index: number): void {
    this.#firstLine ??= index;
  }

  /** The runner's report, or undefined when none of its lines appeared. */
  report(runner: TestRunnerName, failures: readonly string[]): RunnerReport | undefined {
    const firstLine = this.#firstLine;
    if (firstLine === undefined) return undefined;
    return { runner, firstLine, tally: this.#tally, failures };
  }
}
