import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";

const CARGO_RESULT =
  /^test result: [A-Za-z]+\. (\d{1,15}) passed; (\d{1,15}) failed; (\d{1,15}) ignored;/;

/** cargo test: one `test result:` line per test binary, failing tests by `test x ... FAILED`. */
export class CargoScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();

  summary({ text, index }: OutputLine): boolean {
    const result = CARGO_RESULT.exec(text);
    if (!result) return false;
    const [, passed, failed, ignored] = result;
    this.#summaries.record(
      { passed: Number(passed), failed: Number(failed), skipped: Number(ignored) },
      index,
    );
    return true;
  }

  detail({ text }: OutputLine): boolean {
    if (!text.startsWith("test ") || !text.endsWith(" ... FAILED")) return false;
    this.#failures.add(text.slice("test ".length, -" ... FAILED".length));
    return true;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("cargo", this.#failures.names);
  }
}
