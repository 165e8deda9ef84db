import { nameBeforeDuration } from "./duration-suffix.js";
import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { sumCounts, type Tally } from "./tally.js";

// Anchored patterns with no overlapping quantifiers: linear in the line. Counts are at most 15
// digits so that no sum of them can leave the integers.
const JEST_TESTS = /^Tests:\s+(\d.*)$/;
const JEST_COUNT = /^(\d{1,15}) (passed|failed|skipped|todo|pending|total)$/;

/** Parses jest's `Tests:       2 failed, 1 skipped, 2 todo, 3 passed, 8 total`. */
function parseJestSummary(line: string): Tally | undefined {
  const body = JEST_TESTS.exec(line)?.[1];
  if (body === undefined) return undefined;
  return sumCounts(body.trim().split(", "), JEST_COUNT, (word) => {
    if (word === "passed" || word === "failed" || word === "todo") return word;
    return word === "total" ? undefined : "skipped";
  });
}

/** jest: its `Tests:` summary, failing tests by `●` bullet or by verbose `✕` line. */
export class JestScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #bullets = new NameList();
  readonly #crosses = new NameList();
  #lastFailedFile: string | undefined;

  summary({ text, index }: OutputLine): boolean {
    return this.#summaries.recordFound(parseJestSummary(text), index);
  }

  detail({ text, trimmed }: OutputLine): boolean {
    if (trimmed.startsWith("● ")) {
      const name = trimmed.slice(2);
      if (name === "Test suite failed to run") {
        if (this.#lastFailedFile) this.#bullets.add(this.#lastFailedFile);
      } else if (text !== trimmed) {
        // Unindented bullets are jest's configuration warnings, not tests.
        this.#bullets.add(name);
      }
      return true;
    }
    if (trimmed.startsWith("✕ ")) {
      this.#crosses.add(nameBeforeDuration(trimmed.slice(2)));
      return true;
    }
    // jest prints `FAIL ./file.test.js`, and vitest `FAIL  file.test.ts > suite > test`: the
    // line is left for vitest's scanner too.
    if (trimmed.startsWith("FAIL ")) this.#lastFailedFile = trimmed.slice(5).trim();
    return false;
  }

  finish(): RunnerReport | undefined {
    // Bullets carry the suite path; the verbose crosses only the test's own name.
    const bullets = this.#bullets.names;
    return this.#summaries.report("jest", bullets.length > 0 ? bullets : this.#crosses.names);
  }
}
