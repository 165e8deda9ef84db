import { nameBeforeDuration } from "./duration-suffix.js";
import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { sumCounts, type Tally } from "./tally.js";

const VITEST_TOTAL = /^\(\d+\)$/;
const VITEST_COUNT = /^(\d{1,15}) (passed|failed|skipped|todo|[a-z]+(?: [a-z]+)?)$/;

/** Parses vitest's `Tests  1 failed | 4 passed | 1 skipped | 1 todo (7)`. */
function parseVitestSummary(trimmed: string): Tally | undefined {
  // String operations rather than one pattern: a lazy match up to `(7)` would be quadratic.
  if (!trimmed.startsWith("Tests ") || !trimmed.endsWith(")")) return undefined;
  const totalAt = trimmed.lastIndexOf("(");
  if (totalAt < 0 || !VITEST_TOTAL.test(trimmed.slice(totalAt))) return undefined;
  const body = trimmed.slice("Tests ".length, totalAt).trim();
  if (body === "") return undefined;
  const parts = body.split("|").map((part) => part.trim());
  return sumCounts(parts, VITEST_COUNT, (word) => {
    if (word === "passed" || word === "failed" || word === "todo") return word;
    return word === "skipped" ? "skipped" : undefined;
  });
}

/** vitest: its `Tests` summary, failing tests by `FAIL` line or by verbose `×` line. */
export class VitestScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failLines = new NameList();
  readonly #crosses = new NameList();

  summary({ trimmed, index }: OutputLine): boolean {
    return this.#summaries.recordFound(parseVitestSummary(trimmed), index);
  }

  detail({ trimmed }: OutputLine): boolean {
    if (trimmed.startsWith("FAIL ")) {
      this.#failLines.add(trimmed.slice(5).trim());
      return true;
    }
    if (trimmed.startsWith("× ")) {
      this.#crosses.add(nameBeforeDuration(trimmed.slice(2)));
      return true;
    }
    return false;
  }

  finish(): RunnerReport | undefined {
    const failLines = this.#failLines.names;
    return this.#summaries.report("vitest", failLines.length > 0 ? failLines : this.#crosses.names);
  }
}
