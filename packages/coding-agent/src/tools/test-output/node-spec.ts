import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { type CountCategory, single } from "./tally.js";

const NODE_SPEC_COUNT = /^ℹ (pass|fail|cancelled|skipped|todo) (\d{1,15})$/;
const NODE_DURATION_SUFFIX = /^\(\d+(?:\.\d+)?ms\)(?: #.*)?$/;
const TODO_OR_SKIP = /(?:^|\s)#\s*(?:TODO|SKIP)\b/i;

/**
 * The category of a count line of node:test's summary (`ℹ fail 1`, or `# fail 1` from its TAP
 * reporter): cancelled tests count as failed, and todo ones apart from skipped.
 */
export function nodeTestCategory(word: string): CountCategory {
  if (word === "pass") return "passed";
  if (word === "todo") return "todo";
  return word === "fail" || word === "cancelled" ? "failed" : "skipped";
}

/** node --test's spec reporter: its `ℹ pass 3` lines, failing tests by `✖ name (1.2ms)`. */
export class NodeSpecScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  // The spec reporter opens a suite with `▶ name` and closes it with `✖ name` when a child
  // fails; remembering suites keeps them out of the failing test names.
  readonly #suites = new Set<string>();

  summary({ text, index }: OutputLine): boolean {
    const count = NODE_SPEC_COUNT.exec(text);
    if (count)
      this.#summaries.record(single(nodeTestCategory(count[1] as string), Number(count[2])), index);
    return count !== null;
  }

  detail({ text, trimmed }: OutputLine): boolean {
    if (trimmed.startsWith("▶ ")) {
      if (this.#suites.size < 10_000) this.#suites.add(`${text.indexOf("▶")}:${trimmed.slice(2)}`);
      return true;
    }
    if (!trimmed.startsWith("✖ ")) return false;
    const rest = trimmed.slice(2);
    const durationAt = rest.lastIndexOf(" (");
    const suffix = rest.slice(durationAt + 1);
    // `✖ failing tests:` heads a list and has no duration; a failing todo is not a failure.
    if (durationAt > 0 && NODE_DURATION_SUFFIX.test(suffix) && !TODO_OR_SKIP.test(suffix)) {
      const name = rest.slice(0, durationAt);
      if (!this.#suites.has(`${text.indexOf("✖")}:${name}`)) this.#failures.add(name);
    }
    return true;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("node", this.#failures.names);
  }
}
