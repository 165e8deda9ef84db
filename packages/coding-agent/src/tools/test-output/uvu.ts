import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";

// Anchored, no overlapping quantifiers: linear in the line.
const UVU_TOTAL = /^Total:\s+(\d{1,15})$/;
const UVU_PASSED = /^Passed:\s+(\d{1,15})$/;
const UVU_SKIPPED = /^Skipped:\s+(\d{1,15})$/;
const UVU_DURATION = /^Duration:\s+\d+(?:\.\d+)?ms$/;

/**
 * uvu: its summary of four lines, `Total:` (the tests run), `Passed:`, `Skipped:` and `Duration:`
 * (failed is total minus passed), and each failure's `FAIL  suite  "name"` line (`FAIL  "name"`
 * for a test outside a suite), named `suite > name`.
 */
export class UvuScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  /** The summary's numbers read so far, while its lines follow one another. */
  #pending: number[] = [];

  summary({ trimmed, index }: OutputLine): boolean {
    const pending = this.#pending;
    const number = [UVU_TOTAL, UVU_PASSED, UVU_SKIPPED][pending.length]?.exec(trimmed)?.[1];
    if (number !== undefined) {
      pending.push(Number(number));
      return false;
    }
    // Any other line ends the summary; a `Total:` line may start the next one.
    const total = UVU_TOTAL.exec(trimmed)?.[1];
    this.#pending = total === undefined ? [] : [Number(total)];
    const [run, passed, skipped] = pending;
    if (run === undefined || passed === undefined || skipped === undefined) return false;
    if (!UVU_DURATION.test(trimmed) || passed > run) return false;
    this.#summaries.record({ passed, failed: run - passed, skipped }, index);
    return true;
  }

  detail({ trimmed }: OutputLine): boolean {
    const name = failureName(trimmed);
    if (name === undefined) return false;
    this.#failures.add(name);
    return true;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("uvu", this.#failures.names);
  }
}

/** The test named by uvu's `FAIL  suite  "name"` or `FAIL  "name"`; undefined for other lines. */
function failureName(trimmed: string): string | undefined {
  if (!trimmed.startsWith("FAIL  ") || !trimmed.endsWith('"') || trimmed.length < 8) {
    return undefined;
  }
  const rest = trimmed.slice("FAIL  ".length, -1);
  if (rest.startsWith('"')) return rest.slice(1);
  const quote = rest.indexOf('  "');
  if (quote <= 0) return undefined;
  return `${rest.slice(0, quote)} > ${rest.slice(quote + 3)}`;
}
