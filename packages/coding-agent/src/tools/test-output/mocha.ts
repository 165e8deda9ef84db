import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { single } from "./tally.js";

const MOCHA_PASSING = /^\s*(\d{1,15}) passing \(\d+(?:\.\d+)?(?:ms|s|m|h)\)$/;
const MOCHA_OTHER = /^\s*(\d{1,15}) (pending|failing)$/;
const MOCHA_FAILURE_TITLE = /^ {2}\d+\) (.*)$/;

/**
 * mocha: `N passing (5ms)`, then `N pending` and `N failing`, then each failure's numbered title,
 * one suite per line, the test's own line ending in `:`.
 */
export class MochaScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  #summaryOpen = false;
  #failuresOpen = false;
  #title: string[] | undefined;

  /** The lines of a failure's title after its first. */
  claim({ trimmed }: OutputLine): boolean {
    const title = this.#title;
    if (!title) return false;
    if (trimmed === "" || title.length > 50) {
      this.#title = undefined;
      return false;
    }
    if (trimmed.endsWith(":")) {
      title.push(trimmed.slice(0, -1));
      // Joined with spaces, as mocha's own fullTitle() and --grep see it.
      this.#failures.add(title.join(" "));
      this.#title = undefined;
    } else {
      title.push(trimmed);
    }
    return true;
  }

  detail({ text, trimmed, index }: OutputLine): boolean {
    const passing = MOCHA_PASSING.exec(text);
    if (passing) {
      this.#summaries.record({ passed: Number(passing[1]) }, index);
      this.#summaryOpen = true;
      return true;
    }
    // `N pending` and `N failing` count only straight after `N passing`, which mocha always
    // prints first; elsewhere such lines are too common to trust.
    if (this.#summaryOpen) {
      const other = MOCHA_OTHER.exec(text);
      if (other) {
        const failing = other[2] === "failing";
        this.#summaries.record(single(failing ? "failed" : "skipped", Number(other[1])), index);
        if (failing) this.#failuresOpen = true;
        return true;
      }
      if (trimmed !== "") this.#summaryOpen = false;
    }
    if (this.#failuresOpen) {
      const title = MOCHA_FAILURE_TITLE.exec(text)?.[1];
      if (title !== undefined) {
        if (title.endsWith(":")) this.#failures.add(title.slice(0, -1));
        else this.#title = [title];
        return true;
      }
    }
    return false;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("mocha", this.#failures.names);
  }
}
