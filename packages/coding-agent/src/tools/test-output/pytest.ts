import { NameList } from "./name-list.js";
import {
  type OutputLine,
  type RunnerReport,
  type RunnerScanner,
  RunnerSummaries,
} from "./runner-scanner.js";
import { type CountCategory, sumCounts, type Tally, zeroTally } from "./tally.js";
import type { RecordVerdict, TestStatus } from "./test-verdicts.js";

const PYTEST_COUNT =
  /^(\d{1,15}) (passed|failed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun|reruns)$/;
const PYTEST_DURATION = /^\d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?$/;

function pytestCategory(word: string): CountCategory | undefined {
  switch (word) {
    case "passed":
    case "failed":
    case "skipped":
    case "xfailed":
    case "xpassed":
    case "deselected":
      return word;
    case "error":
    case "errors":
      return "errors";
    default:
      // Warnings and reruns are not tests.
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

const STATUS_OF_WORD = {
  PASSED: "passed",
  FAILED: "failed",
  ERROR: "error",
  SKIPPED: "skipped",
  XFAIL: "xfail",
  XPASS: "xpass",
} as const satisfies Record<string, TestStatus>;

type StatusWord = keyof typeof STATUS_OF_WORD;

/** `-rA`'s summary lines: `PASSED id`, `FAILED id - message`, `XPASS id reason`, ... */
const STATUS_FIRST = /^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S.*)$/;
/** `SKIPPED [2] tests/test_x.py:12: reason`: skips summed by place, naming no test. */
const SKIP_SUMMARY = /^\[\d+\] /;
/**
 * The status word of a `-v` line: `id PASSED`, then `(reason)` or the progress `[ 50%]` or the
 * end. The first such word ends the id, so an id holding spaces (`test_x[a b]`) stays whole.
 */
const STATUS_AFTER = / (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?= \(| +\[ *\d{1,3}%\]$|$)/;

/**
 * The id in a `-rA` line after its status word. It ends at the first space, unless a `[` opened
 * its parameters before that: then at the first `]` that ends the line or comes before a space
 * (`test_x[c - d] - AssertionError` is `test_x[c - d]`).
 */
function summaryNodeId(rest: string): string {
  const space = rest.indexOf(" ");
  const bracket = rest.indexOf("[");
  if (space === -1) return rest;
  if (bracket === -1 || bracket > space) return rest.slice(0, space);
  for (let index = rest.indexOf("]", bracket); index !== -1; index = rest.indexOf("]", index + 1)) {
    if (index + 1 === rest.length || rest[index + 1] === " ") return rest.slice(0, index + 1);
  }
  return rest.slice(0, space);
}

/** What one pytest line says about one test. */
interface PytestVerdict {
  /** The test's node id, `tests/test_x.py::test_y[a b]`, spaces kept. */
  nodeId: string;
  status: TestStatus;
}

/**
 * The verdict on one test in a trimmed line of pytest's output: `-rA`'s summary lines
 * (`FAILED tests/test_x.py::test_y - boom`, `PASSED ...`, `XFAIL ...`) and `-v`'s progress lines
 * (`tests/test_x.py::test_y FAILED [ 50%]`). `null` for `-rA`'s skip lines, which name a place,
 * not a test; undefined for any other line.
 */
function pytestVerdict(trimmed: string): PytestVerdict | null | undefined {
  const first = STATUS_FIRST.exec(trimmed);
  if (first) {
    const word = first[1] as StatusWord;
    const rest = first[2] as string;
    if (word === "SKIPPED" && SKIP_SUMMARY.test(rest)) return null;
    // pytest prints nothing after a passing id, so all of it is the id.
    const nodeId = word === "PASSED" ? rest : summaryNodeId(rest);
    return { nodeId, status: STATUS_OF_WORD[word] };
  }
  if (!trimmed.includes("::")) return undefined;
  const after = STATUS_AFTER.exec(trimmed);
  if (!after) return undefined;
  const nodeId = trimmed.slice(0, after.index);
  // A node id starts with its file's path: `test a::b ... FAILED` is cargo's, not pytest's.
  const path = nodeId.indexOf("::");
  if (path <= 0 || /\s/.test(nodeId.slice(0, path))) return undefined;
  return { nodeId, status: STATUS_OF_WORD[after[1] as StatusWord] };
}

/**
 * pytest: its final summary line, failing tests by node id (`-rA`, `-v` and the default), and
 * each test's verdict from `-rA` and `-v` lines.
 */
export class PytestScanner implements RunnerScanner {
  readonly #summaries = new RunnerSummaries();
  readonly #failures = new NameList();
  readonly #record: RecordVerdict;

  constructor(record: RecordVerdict) {
    this.#record = record;
  }

  summary({ trimmed, index }: OutputLine): boolean {
    const tally = trimmed.includes(" in ") ? parsePytestSummary(trimmed) : undefined;
    return this.#summaries.recordFound(tally, index);
  }

  detail({ trimmed }: OutputLine): boolean {
    const found = pytestVerdict(trimmed);
    if (found === undefined) return false;
    if (found === null) return true;
    this.#record({ name: found.nodeId, status: found.status, runner: "pytest" });
    if (found.status === "failed" || found.status === "error") this.#failures.add(found.nodeId);
    return true;
  }

  finish(): RunnerReport | undefined {
    return this.#summaries.report("pytest", this.#failures.names);
  }
}
