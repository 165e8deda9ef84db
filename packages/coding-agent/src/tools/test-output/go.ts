import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";

const GO_RESULT = /^\s*--- (PASS|FAIL|SKIP): (\S+)/;
const GO_RUN = /^=== RUN\s/;
const GO_PACKAGE = /^(ok|FAIL|\?)\s*\t(\S+)/;

/**
 * go test: it prints no summary of counts, so its counts are its `--- PASS`, `--- FAIL` and
 * `--- SKIP` lines (subtests and their parents each count once), and its evidence, spread over
 * the whole output, ranks by its first line.
 */
export class GoScanner implements RunnerScanner {
  readonly #failures = new NameList();
  #firstLine: number | undefined;
  #verbose = false;
  #passed = 0;
  #failed = 0;
  #skipped = 0;
  #failuresSincePackage = 0;

  detail({ text, index }: OutputLine): boolean {
    const result = GO_RESULT.exec(text);
    if (result) {
      this.#firstLine ??= index;
      if (result[1] === "PASS") {
        this.#passed++;
        this.#verbose = true;
      } else if (result[1] === "SKIP") {
        this.#skipped++;
        this.#verbose = true;
      } else {
        this.#failed++;
        this.#failuresSincePackage++;
        this.#failures.add(result[2] as string);
      }
      return true;
    }
    if (GO_RUN.test(text)) {
      this.#firstLine ??= index;
      this.#verbose = true;
      return true;
    }
    const packageLine = GO_PACKAGE.exec(text);
    if (packageLine) {
      this.#firstLine ??= index;
      // go prints each package's tests before its result line, so a FAIL with no failing test
      // since the previous package is a build error or a crash: name the package instead.
      if (packageLine[1] === "FAIL" && this.#failuresSincePackage === 0) {
        this.#failures.add(packageLine[2] as string);
      }
      this.#failuresSincePackage = 0;
      return true;
    }
    return false;
  }

  finish(): RunnerReport | undefined {
    const firstLine = this.#firstLine;
    if (firstLine === undefined) return undefined;
    const summaries = new RunnerSummaries();
    if (this.#verbose) {
      summaries.record(
        { passed: this.#passed, failed: this.#failed, skipped: this.#skipped },
        firstLine,
      );
    } else if (this.#failed > 0) {
      // Without -v, go prints failing tests only: passes and skips are unknowable.
      summaries.record({ failed: this.#failed }, firstLine, { complete: false });
    } else {
      // Package lines alone give no counts.
      summaries.seen(firstLine);
    }
    return summaries.report("go", this.#failures.names);
  }
}
