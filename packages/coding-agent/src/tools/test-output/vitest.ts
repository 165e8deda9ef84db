import { nameBeforeDuration } from "./duration-suffix.js";
import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { addTo, type Tally, zeroTally } from "./tally.js";

const VITEST_TOTAL = /^\(\d+\)$/;
const VITEST_COUNT = /^(\d{1,15}) (passed|failed|skipped|todo|[a-z]+(?: [a-z]+)?)$/;

/** Parses vitest's `Tests  1 failed | 4 passed | 1 skipped | 1 todo (7)`. */
export function parseVitestSummary(trimmed: string): Tally | undefined {
  // String operations rather than one pattern: a lazy match up to `(7)` would be quadratic.
  if (!trimmed.startsWith("Tests ") || !trimmed.endsWith(")")) return undefined;
  const totalAt = trimmed.lastIndexOf("(");
  if (totalAt < 0 || !VITEST_TOTAL.test(trimmed.slice(totalAt))) return undefined;
  const body = trimmed.slice("Tests ".length, totalAt).trim();
  if (body === "") return undefined;
  const tally = zeroTally();
  for (const part of body.split("|")) {
    const match = VITEST_COUNT.exec(part.trim());
    if (!match) return undefined;
    const word = match[2];
    const count = Number(match[1]);
    if (word === "passed") addTo(tally, "passed", count);
    else if (word === "failed") addTo(tally, "failed", count);
    else if (word === "skipped" || word === "todo") addTo(tally, "skipped", count);
  }
  return tally;
}

/** vitest: its `Tests` summary, failing tests by `FAIL` line or by verbose `×` line. */
export class VitestScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failLines = new NameList();
  readonly #crosses = new NameList();

  summary({ trimmed, index }: OutputLine): boolean {
    const tally = parseVitestSummary(trimmed);
    if (tally) this.#summaries.record(tally, index);
    return tally !== undefined;
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
