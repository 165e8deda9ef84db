import { NameList } from "./name-list.js";
import { nodeTestCategory } from "./node-spec.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { single } from "./tally.js";
import { isFailure, TapStream } from "./tap-stream.js";

const TAP_COUNT = /^# (pass|fail|cancelled|skipped|todo)\s+(\d{1,15})$/;
const TEST_POINT = /^\s*(?:not )?ok \d+/;

/**
 * TAP, from node --test --test-reporter=tap, tape or any producer: counts from the `# pass 3`
 * comments node and tape end with, failing tests from the test points, through tap-parser. A
 * subtest's parent (its closing test point) is not a failing test itself.
 *
 * The scanner also claims the lines of a YAML diagnostics block, so that an error message quoted
 * there is not read as another runner's line.
 */
export class TapScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  readonly #stream = new TapStream((point) => {
    if (isFailure(point) && !point.closingTestPoint) this.#failures.add(point.name);
  });
  #lastTestPoint = -2;
  #yamlIndent: number | undefined;

  claim({ text, trimmed }: OutputLine): boolean {
    const yamlIndent = this.#yamlIndent;
    if (yamlIndent === undefined) return false;
    if (trimmed === "...") {
      this.#yamlIndent = undefined;
    } else if (trimmed !== "" && text.length - text.trimStart().length < yamlIndent) {
      // A YAML block is indented under its `---`; anything shallower means it was never closed.
      this.#yamlIndent = undefined;
      return false;
    }
    this.#stream.write(text);
    return true;
  }

  summary({ text, index }: OutputLine): boolean {
    const count = TAP_COUNT.exec(text);
    if (count) {
      this.#summaries.record(single(nodeTestCategory(count[1] as string), Number(count[2])), index);
    }
    return count !== null;
  }

  detail({ text, trimmed, index }: OutputLine): boolean {
    this.#stream.write(text);
    if (TEST_POINT.test(text)) {
      this.#lastTestPoint = index;
      return true;
    }
    // Only a `---` right under a test point opens YAML diagnostics; elsewhere it is just text.
    if (trimmed === "---" && this.#lastTestPoint === index - 1) {
      this.#yamlIndent = text.length - text.trimStart().length;
    }
    return false;
  }

  finish(): RunnerReport | undefined {
    this.#stream.end();
    return this.#summaries.report("tap", this.#failures.names);
  }
}
