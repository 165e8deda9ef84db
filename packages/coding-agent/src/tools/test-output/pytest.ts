import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { type CountCategory, sumCounts, type Tally, zeroTally } from "./tally.js";

const PYTEST_COUNT =
  /^(\d{1,15}) (passed|failed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun|reruns)$/;
const PYTEST_DURATION = /^\d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?$/;
const VERDICTS = ["PASSED", "FAILED", "ERROR"] as const;

function pytestCategory(word: string): CountCategory | undefined {
  switch (word) {
    case "passed":
    case "xpassed":
      return "passed";
    case "failed":
    case "error":
    case "errors":
      return "failed";
    case "skipped":
    case "xfailed":
      return "skipped";
    default:
      // Deselected tests were filtered out by the caller, and warnings are not tests.
      return undefined;
  }
}

/**
 * Parses pytest's final line, framed by `=` or bare under `-q`:
 * `1 failed, 3 passed, 1 skipped in 0.05s`, or `no tests ran in 0.01s`.
 */
function parsePytestSummary(trimmed: string): Tally | undefined {
  let body = trimmed;
  if (body.startsWith("=") && body.endsWith("=")) {
    let start = 0;
    let end = body.length;
    while (start < end && body[start] === "=") start++;
    while (end > start && body[end - 1] === "=") end--;
    body = body.slice(start, end).trim();
  }
  const separator = body.lastIndexOf(" in ");
  if (separator <= 0 || !PYTEST_DURATION.test(body.slice(separator + 4))) return undefined;
  const counts = body.slice(0, separator);
  if (counts === "no tests ran") return zeroTally();
  return sumCounts(counts.split(", "), PYTEST_COUNT, pytestCategory);
}

/** A pytest node id ends at the first space outside a `[...]` parametrisation. */
function pytestNodeId(text: string): string {
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (character === "[") depth++;
    else if (character === "]" && depth > 0) depth--;
    else if (character === " " && depth === 0) return text.slice(0, index);
  }
  return text;
}

/** What one pytest line says about one test. */
export interface PytestVerdict {
  /** The test's node id, `tests/test_x.py::test_y[a b]`. */
  nodeId: string;
  verdict: (typeof VERDICTS)[number];
}

/**
 * The verdict on one test in a trimmed line of pytest's output: `-rA`'s summary lines
 * (`FAILED tests/test_x.py::test_y - boom`, `PASSED ...`, `ERROR ...`) and `-v`'s progress lines
 * (`tests/test_x.py::test_y FAILED [ 50%]`). Undefined for any other line.
 */
export function pytestVerdict(trimmed: string): PytestVerdict | undefined {
  for (const verdict of VERDICTS) {
    if (trimmed.startsWith(`${verdict} `)) {
      return { nodeId: pytestNodeId(trimmed.slice(verdict.length + 1)), verdict };
    }
  }
  if (!trimmed.includes("::")) return undefined;
  const nodeId = pytestNodeId(trimmed);
  const rest = trimmed.slice(nodeId.length).trimStart();
  const verdict = VERDICTS.find((candidate) => rest.startsWith(candidate));
  return verdict === undefined ? undefined : { nodeId, verdict };
}

/** pytest: its final summary line, failing tests by node id (`-rA`, `-v` and the default). */
export class PytestScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();

  summary({ trimmed, index }: OutputLine): boolean {
    const tally = trimmed.includes(" in ") ? parsePytestSummary(trimmed) : undefined;
    return this.#summaries.recordFound(tally, index);
  }

  detail({ trimmed }: OutputLine): boolean {
    const found = pytestVerdict(trimmed);
    if (found === undefined) return false;
    if (found.verdict !== "PASSED") this.#failures.add(found.nodeId);
    return true;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("pytest", this.#failures.names);
  }
}
