/** The test runners whose output {@link parseTestRunnerOutput} recognises. */
export type TestRunnerName =
  | "jest"
  | "vitest"
  | "pytest"
  | "cargo"
  | "nextest"
  | "go"
  | "node"
  | "mocha"
  | "tap";

/**
 * What a test run's output says about its outcome. Every field is optional because the parser
 * reports only what the output shows: `undefined` means "no signal", never "no tests".
 */
export interface TestRunnerCounts {
  /** Tests that passed. */
  passed?: number;
  /** Tests that failed, errored, timed out or were cancelled. */
  failed?: number;
  /** Tests that did not run to a verdict: skipped, ignored, pending, todo and xfailed. */
  skipped?: number;
  /**
   * Names of failing tests as the runner prints them (`math › division › divides`,
   * `tests/test_x.py::test_y`, `TestPerimeter`), first seen first, without duplicates. At most
   * {@link MAX_FAILURE_NAMES} names of at most {@link MAX_FAILURE_NAME_LENGTH} characters each.
   * Absent when no failing name was recognised.
   */
  failures?: string[];
  /**
   * The runner whose summary appeared first. `tap` covers any TAP producer, `node --test
   * --test-reporter=tap` included; `node` is the node:test spec reporter.
   */
  runner?: TestRunnerName;
}

/** The most failing test names {@link parseTestRunnerOutput} returns. */
export const MAX_FAILURE_NAMES = 100;

/** The longest failing test name {@link parseTestRunnerOutput} returns; longer ones are cut. */
export const MAX_FAILURE_NAME_LENGTH = 200;

interface Tally {
  passed?: number;
  failed?: number;
  skipped?: number;
}

type CountCategory = keyof Tally;

/** Keeps the first distinct names, bounded, so huge outputs cannot grow memory without limit. */
class NameList {
  readonly names: string[] = [];
  readonly #seen = new Set<string>();

  add(rawName: string): void {
    const name = rawName.trim().slice(0, MAX_FAILURE_NAME_LENGTH);
    if (name === "" || this.names.length >= MAX_FAILURE_NAMES || this.#seen.has(name)) return;
    this.#seen.add(name);
    this.names.push(name);
  }
}

// Escape sequences terminals understand: CSI (colours, cursor moves), OSC (titles, hyperlinks,
// bounded so an unterminated one cannot make the scan quadratic), charset selection (`ESC ( B`,
// which terminfo's sgr0 emits) and the remaining two-byte escapes.
const ANSI_PATTERN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape bytes is the point.
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]{0,4096}(?:\u0007|\u001b\\)|\u001b[()*+][0-9A-Za-z]|\u001b[@-Z\\-_]/g;

const LINE_BREAK = /\r\n|\n|\r/;

// Every pattern is anchored at the start of one line and has no nested or overlapping
// quantifiers, so each runs in time linear in the line whatever the input. Counts are at most 15
// digits so that no sum of them can leave the integers.
const JEST_TESTS = /^Tests:\s+(\d.*)$/;
const JEST_COUNT = /^(\d{1,15}) (passed|failed|skipped|todo|pending|total)$/;
const VITEST_TOTAL = /^\(\d+\)$/;
const VITEST_COUNT = /^(\d{1,15}) (passed|failed|skipped|todo|[a-z]+(?: [a-z]+)?)$/;
const PYTEST_COUNT =
  /^(\d{1,15}) (passed|failed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun|reruns)$/;
const PYTEST_DURATION = /^\d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?$/;
const CARGO_RESULT =
  /^test result: [A-Za-z]+\. (\d{1,15}) passed; (\d{1,15}) failed; (\d{1,15}) ignored;/;
const NEXTEST_SUMMARY = /^\s*Summary \[[^\]]*\] (?:\d+\/)?\d+ tests? run: (.*)$/;
const NEXTEST_COUNT = /^(\d{1,15}) ([a-z]+(?: [a-z]+)?)$/;
const NEXTEST_FAILURE =
  /^\s*(?:FAIL|TIMEOUT|ABORT|LEAK-FAIL|SIG[A-Z]+) \[[^\]]*\] (?:\(\d+\/\d+\) )?(\S.*)$/;
const GO_RESULT = /^\s*--- (PASS|FAIL|SKIP): (\S+)/;
const GO_RUN = /^=== RUN\s/;
const GO_PACKAGE = /^(ok|FAIL|\?)\s*\t(\S+)/;
const NODE_SPEC_COUNT = /^ℹ (pass|fail|cancelled|skipped|todo) (\d{1,15})$/;
const TAP_COUNT = /^# (pass|fail|cancelled|skipped|todo)\s+(\d{1,15})$/;
const TAP_NOT_OK = /^(\s*)not ok \d+(?: -)?(?: (.*))?$/;
const TAP_OK = /^\s*ok \d+/;
const TAP_PLAN = /^(\s*)1\.\.\d+/;
const TAP_DIRECTIVE = /(?:^|\s)#\s*(?:TODO|SKIP)\b/i;
const MOCHA_PASSING = /^\s*(\d{1,15}) passing \(\d+(?:\.\d+)?(?:ms|s|m|h)\)$/;
const MOCHA_OTHER = /^\s*(\d{1,15}) (pending|failing)$/;
const MOCHA_FAILURE_TITLE = /^ {2}\d+\) (.*)$/;
const NODE_DURATION_SUFFIX = /^\(\d+(?:\.\d+)?ms\)(?: #.*)?$/;
const DURATION_SUFFIX = /\s\(?\d+(?:\.\d+)? ?m?s\)?$/;

/** Strips terminal escape sequences so colourised output parses like plain output. */
function stripAnsi(text: string): string {
  return text.includes("\u001b") ? text.replace(ANSI_PATTERN, "") : text;
}

function addTo(tally: Tally, category: CountCategory, count: number): void {
  tally[category] = (tally[category] ?? 0) + count;
}

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
function parsePytestSummary(line: string): Tally | undefined {
  let body = line.trim();
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
  const tally: Tally = { passed: 0, failed: 0, skipped: 0 };
  if (counts === "no tests ran") return tally;
  for (const part of counts.split(", ")) {
    const match = PYTEST_COUNT.exec(part);
    if (!match) return undefined;
    const category = pytestCategory(match[2] as string);
    if (category) addTo(tally, category, Number(match[1]));
  }
  return tally;
}

function parseJestSummary(line: string): Tally | undefined {
  const body = JEST_TESTS.exec(line)?.[1];
  if (body === undefined) return undefined;
  const tally: Tally = { passed: 0, failed: 0, skipped: 0 };
  for (const part of body.trim().split(", ")) {
    const match = JEST_COUNT.exec(part);
    if (!match) return undefined;
    const word = match[2];
    const count = Number(match[1]);
    if (word === "passed") addTo(tally, "passed", count);
    else if (word === "failed") addTo(tally, "failed", count);
    else if (word !== "total") addTo(tally, "skipped", count);
  }
  return tally;
}

/** Parses vitest's `Tests  1 failed | 4 passed | 1 skipped | 1 todo (7)`. */
function parseVitestSummary(trimmed: string): Tally | undefined {
  // String operations rather than one pattern: a lazy match up to `(7)` would be quadratic.
  if (!trimmed.startsWith("Tests ") || !trimmed.endsWith(")")) return undefined;
  const totalAt = trimmed.lastIndexOf("(");
  if (totalAt < 0 || !VITEST_TOTAL.test(trimmed.slice(totalAt))) return undefined;
  const body = trimmed.slice("Tests ".length, totalAt).trim();
  if (body === "") return undefined;
  const tally: Tally = { passed: 0, failed: 0, skipped: 0 };
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

/**
 * Parses nextest's `Summary [ 0.010s] 5 tests run: 4 passed (1 slow), 1 failed, 1 skipped`.
 * Parenthesised notes qualify the passes and a `;` starts a cancellation note; both are dropped.
 */
function parseNextestSummary(line: string): Tally | undefined {
  const body = NEXTEST_SUMMARY.exec(line)?.[1];
  if (body === undefined) return undefined;
  const counts = (body.split(";")[0] as string).replace(/\([^()]*\)/g, "");
  const tally: Tally = { passed: 0, failed: 0, skipped: 0 };
  for (const part of counts.split(",")) {
    const match = NEXTEST_COUNT.exec(part.trim());
    if (!match) return undefined;
    const word = match[2];
    const count = Number(match[1]);
    if (word === "passed") addTo(tally, "passed", count);
    else if (word === "skipped") addTo(tally, "skipped", count);
    else if (word === "failed" || word === "exec failed" || word === "timed out") {
      addTo(tally, "failed", count);
    }
  }
  return tally;
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

/** The name in a line like `✕ divides (2 ms)` or `× divides 14ms`, without the duration. */
function nameBeforeDuration(text: string): string {
  return text.replace(DURATION_SUFFIX, "");
}

function single(category: CountCategory, count: number): Tally {
  const tally: Tally = {};
  tally[category] = count;
  return tally;
}

/**
 * One pass over the lines of an output. Counts go into per-runner tallies; failing names go into
 * per-runner lists and are reported only for runners whose summary (or, for go, whose package
 * lines) appeared, so a stray `FAILED` in unrelated output names nothing.
 */
class OutputScanner {
  readonly #tallies = new Map<TestRunnerName, Tally>();
  readonly #firstLine = new Map<TestRunnerName, number>();
  readonly #names = {
    jestBullets: new NameList(),
    jestCrosses: new NameList(),
    vitestFailLines: new NameList(),
    vitestCrosses: new NameList(),
    pytest: new NameList(),
    cargo: new NameList(),
    nextest: new NameList(),
    go: new NameList(),
    node: new NameList(),
    tap: new NameList(),
    mocha: new NameList(),
  };
  readonly #go = { verbose: false, passed: 0, failed: 0, skipped: 0, failuresSincePackage: 0 };
  #goFirstLine: number | undefined;
  #mochaSummaryOpen = false;
  #mochaFailuresOpen = false;
  #mochaTitle: string[] | undefined;
  #tapLastTestPoint = -2;
  #tapLastPlanIndent: number | undefined;
  #tapYamlIndent: number | undefined;
  // node's spec reporter opens a suite with `▶ name` and closes it with `✖ name` when a child
  // fails; remembering suites keeps them out of the failing test names.
  readonly #nodeSuites = new Set<string>();
  #jestLastFailedFile: string | undefined;

  scan(line: string, index: number): void {
    const trimmed = line.trim();
    if (this.#continueMochaTitle(trimmed)) return;
    if (this.#insideTapYaml(line, trimmed)) return;
    if (this.#scanSummary(line, trimmed, index)) return;
    if (this.#scanGo(line, index)) return;
    if (this.#scanMocha(line, trimmed, index)) return;
    if (this.#scanFailureName(line, trimmed)) return;
    this.#scanTap(line, trimmed, index);
  }

  result(): TestRunnerCounts {
    const go = this.#go;
    const goFirstLine = this.#goFirstLine;
    if (goFirstLine !== undefined) {
      // go's evidence is spread over the whole output; it ranks by its first line.
      if (go.verbose) {
        const { passed, failed, skipped } = go;
        this.#record("go", { passed, failed, skipped }, goFirstLine);
      } else if (go.failed > 0) {
        // Without -v, go prints failing tests only: passes and skips are unknowable.
        this.#record("go", { failed: go.failed }, goFirstLine, false);
      } else {
        this.#firstLine.set("go", goFirstLine);
      }
    }
    // nextest echoes a failing test's libtest output, and older versions do so unindented, so
    // its `test result:` lines would count each failure twice: nextest's summary wins.
    if (this.#tallies.has("nextest")) {
      this.#tallies.delete("cargo");
      this.#firstLine.delete("cargo");
    }
    const runners = [...this.#firstLine.entries()]
      .sort((left, right) => left[1] - right[1])
      .map(([runner]) => runner);
    const first = runners[0];
    if (first === undefined) return {};
    const result: TestRunnerCounts = { runner: first };
    const failures = new NameList();
    for (const runner of runners) {
      const tally = this.#tallies.get(runner);
      for (const category of ["passed", "failed", "skipped"] as const) {
        const count = tally?.[category];
        if (count !== undefined) result[category] = (result[category] ?? 0) + count;
      }
      for (const name of this.#failureNames(runner)) failures.add(name);
    }
    if (failures.names.length > 0) result.failures = failures.names;
    return result;
  }

  #failureNames(runner: TestRunnerName): readonly string[] {
    const names = this.#names;
    switch (runner) {
      case "jest":
        // Bullets carry the suite path; the verbose crosses only the test's own name.
        return names.jestBullets.names.length > 0
          ? names.jestBullets.names
          : names.jestCrosses.names;
      case "vitest":
        return names.vitestFailLines.names.length > 0
          ? names.vitestFailLines.names
          : names.vitestCrosses.names;
      default:
        return names[runner].names;
    }
  }

  /**
   * Adds a summary to a runner's tally. A complete summary states all three categories, so the
   * first one sets the missing ones to 0; see {@link parseTestRunnerOutput}.
   */
  #record(runner: TestRunnerName, tally: Tally, index: number, complete = true): void {
    if (!this.#firstLine.has(runner)) this.#firstLine.set(runner, index);
    const total =
      this.#tallies.get(runner) ?? (complete ? { passed: 0, failed: 0, skipped: 0 } : {});
    this.#tallies.set(runner, total);
    for (const category of ["passed", "failed", "skipped"] as const) {
      const count = tally[category];
      if (count !== undefined) addTo(total, category, count);
    }
  }

  #scanSummary(line: string, trimmed: string, index: number): boolean {
    const jest = parseJestSummary(line);
    if (jest) {
      this.#record("jest", jest, index);
      return true;
    }
    const vitest = parseVitestSummary(trimmed);
    if (vitest) {
      this.#record("vitest", vitest, index);
      return true;
    }
    const pytest = trimmed.includes(" in ") ? parsePytestSummary(trimmed) : undefined;
    if (pytest) {
      this.#record("pytest", pytest, index);
      return true;
    }
    const cargo = CARGO_RESULT.exec(line);
    if (cargo) {
      const [, passed, failed, ignored] = cargo;
      this.#record(
        "cargo",
        { passed: Number(passed), failed: Number(failed), skipped: Number(ignored) },
        index,
      );
      return true;
    }
    const nextest = parseNextestSummary(line);
    if (nextest) {
      this.#record("nextest", nextest, index);
      return true;
    }
    const node = NODE_SPEC_COUNT.exec(line) ?? TAP_COUNT.exec(line);
    if (node) {
      const word = node[1];
      const category: CountCategory =
        word === "pass" ? "passed" : word === "fail" || word === "cancelled" ? "failed" : "skipped";
      this.#record(line.startsWith("#") ? "tap" : "node", single(category, Number(node[2])), index);
      return true;
    }
    return false;
  }

  #scanGo(line: string, index: number): boolean {
    const go = this.#go;
    const result = GO_RESULT.exec(line);
    if (result) {
      this.#goFirstLine ??= index;
      if (result[1] === "PASS") {
        go.passed++;
        go.verbose = true;
      } else if (result[1] === "SKIP") {
        go.skipped++;
        go.verbose = true;
      } else {
        go.failed++;
        go.failuresSincePackage++;
        this.#names.go.add(result[2] as string);
      }
      return true;
    }
    if (GO_RUN.test(line)) {
      this.#goFirstLine ??= index;
      go.verbose = true;
      return true;
    }
    const packageLine = GO_PACKAGE.exec(line);
    if (packageLine) {
      this.#goFirstLine ??= index;
      // go prints each package's tests before its result line, so a FAIL with no failing test
      // since the previous package is a build error or a crash: name the package instead.
      if (packageLine[1] === "FAIL" && go.failuresSincePackage === 0) {
        this.#names.go.add(packageLine[2] as string);
      }
      go.failuresSincePackage = 0;
      return true;
    }
    return false;
  }

  #scanMocha(line: string, trimmed: string, index: number): boolean {
    const passing = MOCHA_PASSING.exec(line);
    if (passing) {
      this.#record("mocha", { passed: Number(passing[1]) }, index);
      this.#mochaSummaryOpen = true;
      return true;
    }
    // `N pending` and `N failing` count only straight after `N passing`, which mocha always
    // prints first; elsewhere such lines are too common to trust.
    if (this.#mochaSummaryOpen) {
      const other = MOCHA_OTHER.exec(line);
      if (other) {
        const failing = other[2] === "failing";
        this.#record("mocha", single(failing ? "failed" : "skipped", Number(other[1])), index);
        if (failing) this.#mochaFailuresOpen = true;
        return true;
      }
      if (trimmed !== "") this.#mochaSummaryOpen = false;
    }
    if (this.#mochaFailuresOpen) {
      const title = MOCHA_FAILURE_TITLE.exec(line)?.[1];
      if (title !== undefined) {
        if (title.endsWith(":")) this.#names.mocha.add(title.slice(0, -1));
        else this.#mochaTitle = [title];
        return true;
      }
    }
    return false;
  }

  /** mocha prints a failure's title one suite per line, the test's own line ending in `:`. */
  #continueMochaTitle(trimmed: string): boolean {
    const title = this.#mochaTitle;
    if (!title) return false;
    if (trimmed === "" || title.length > 50) {
      this.#mochaTitle = undefined;
      return false;
    }
    if (trimmed.endsWith(":")) {
      title.push(trimmed.slice(0, -1));
      // Joined with spaces, as mocha's own fullTitle() and --grep see it.
      this.#names.mocha.add(title.join(" "));
      this.#mochaTitle = undefined;
    } else {
      title.push(trimmed);
    }
    return true;
  }

  #scanFailureName(line: string, trimmed: string): boolean {
    const names = this.#names;
    const nextest = NEXTEST_FAILURE.exec(line);
    if (nextest) {
      names.nextest.add(nextest[1] as string);
      return true;
    }
    if (trimmed.startsWith("● ")) {
      const name = trimmed.slice(2);
      if (name === "Test suite failed to run") {
        if (this.#jestLastFailedFile) names.jestBullets.add(this.#jestLastFailedFile);
      } else if (line !== trimmed) {
        // Unindented bullets are jest's configuration warnings, not tests.
        names.jestBullets.add(name);
      }
      return true;
    }
    if (trimmed.startsWith("✕ ")) {
      names.jestCrosses.add(nameBeforeDuration(trimmed.slice(2)));
      return true;
    }
    if (trimmed.startsWith("FAIL ")) {
      // jest prints `FAIL ./file.test.js`; vitest `FAIL  file.test.ts > suite > test`.
      const subject = trimmed.slice(5).trim();
      this.#jestLastFailedFile = subject;
      names.vitestFailLines.add(subject);
      return true;
    }
    if (trimmed.startsWith("× ")) {
      names.vitestCrosses.add(nameBeforeDuration(trimmed.slice(2)));
      return true;
    }
    if (trimmed.startsWith("FAILED ") || trimmed.startsWith("ERROR ")) {
      names.pytest.add(pytestNodeId(trimmed.slice(trimmed.indexOf(" ") + 1)));
      return true;
    }
    if (line.startsWith("test ") && line.endsWith(" ... FAILED")) {
      names.cargo.add(line.slice("test ".length, -" ... FAILED".length));
      return true;
    }
    if (trimmed.includes("::")) {
      // pytest -v prints `path::test_name FAILED [ 50%]`.
      const nodeId = pytestNodeId(trimmed);
      const verdict = trimmed.slice(nodeId.length).trimStart();
      if (verdict.startsWith("FAILED") || verdict.startsWith("ERROR")) {
        names.pytest.add(nodeId);
        return true;
      }
    }
    if (trimmed.startsWith("▶ ")) {
      if (this.#nodeSuites.size < 10_000) {
        this.#nodeSuites.add(`${line.indexOf("▶")}:${trimmed.slice(2)}`);
      }
      return true;
    }
    if (trimmed.startsWith("✖ ")) {
      const rest = trimmed.slice(2);
      const durationAt = rest.lastIndexOf(" (");
      const suffix = rest.slice(durationAt + 1);
      // `✖ failing tests:` heads a list and has no duration; a failing todo is not a failure.
      if (durationAt > 0 && NODE_DURATION_SUFFIX.test(suffix) && !TAP_DIRECTIVE.test(suffix)) {
        const name = rest.slice(0, durationAt);
        if (!this.#nodeSuites.has(`${line.indexOf("✖")}:${name}`)) names.node.add(name);
      }
      return true;
    }
    return false;
  }

  #insideTapYaml(line: string, trimmed: string): boolean {
    const yamlIndent = this.#tapYamlIndent;
    if (yamlIndent === undefined) return false;
    const indent = line.length - line.trimStart().length;
    if (trimmed === "...") {
      this.#tapYamlIndent = undefined;
      return true;
    }
    // A YAML block is indented under its `---`; anything shallower means it was never closed.
    if (trimmed !== "" && indent < yamlIndent) {
      this.#tapYamlIndent = undefined;
      return false;
    }
    return true;
  }

  #scanTap(line: string, trimmed: string, index: number): void {
    const notOk = TAP_NOT_OK.exec(line);
    if (notOk) {
      const indent = (notOk[1] as string).length;
      const description = notOk[2] ?? "";
      // A parent's `not ok` comes straight after its subtests' plan, indented deeper.
      const lastPlanIndent = this.#tapLastPlanIndent;
      const isParent = lastPlanIndent !== undefined && lastPlanIndent > indent;
      if (!isParent && !TAP_DIRECTIVE.test(` ${description}`)) {
        this.#names.tap.add(description.replace(/\s#.*$/, ""));
      }
      this.#tapLastPlanIndent = undefined;
      this.#tapLastTestPoint = index;
      return;
    }
    if (TAP_OK.test(line)) {
      this.#tapLastPlanIndent = undefined;
      this.#tapLastTestPoint = index;
      return;
    }
    const plan = TAP_PLAN.exec(line);
    if (plan) {
      this.#tapLastPlanIndent = (plan[1] as string).length;
      return;
    }
    // Only a `---` right under a test point opens YAML diagnostics; elsewhere it is just text.
    if (trimmed === "---" && this.#tapLastTestPoint === index - 1) {
      this.#tapYamlIndent = line.length - line.trimStart().length;
    }
  }
}

/**
 * Reads the counts and failing test names out of a test run's stdout and stderr. Best effort
 * over the summaries of jest, vitest, pytest, cargo test, cargo nextest, go test, node --test
 * (spec and TAP reporters) and mocha; colour codes are ignored, and the work is one pass that
 * stays linear in the size of the output.
 *
 * Counts are never invented: when no summary is recognised, `passed`, `failed` and `skipped` are
 * all `undefined` ("no signal"), never 0. When a runner's summary is recognised, all three are
 * numbers: a category that runner leaves out when it is zero (jest and vitest omit `failed` and
 * `skipped`, mocha `pending` and `failing`, pytest any outcome it did not see) is reported as 0,
 * because that runner's grammar says so. The one exception is `go test` without `-v`, which
 * prints failing tests but never passing or skipped ones: there only `failed` is set. Package
 * lines alone (`ok  pkg`, `FAIL pkg`) give no counts, though a package that failed without
 * naming a test (a build error) is listed in `failures` by its import path.
 *
 * Categories map as: skipped, ignored, pending, todo and pytest's xfailed count as `skipped`;
 * errors, cancelled, timed-out and exec-failed tests as `failed`; xpassed as `passed`. Tests
 * deselected or filtered out by the caller are not counted. Several summaries (cargo prints one
 * per test binary, doc-tests included; a workspace may run a runner per package) are summed.
 * go's counts are its `--- PASS`, `--- FAIL` and `--- SKIP` lines, subtests and their parents
 * each counting once.
 *
 * @example
 * ```ts
 * parseTestRunnerOutput("===== 1 failed, 3 passed in 0.05s =====");
 * // { runner: "pytest", passed: 3, failed: 1, skipped: 0 }
 * ```
 */
export function parseTestRunnerOutput(output: string): TestRunnerCounts {
  const scanner = new OutputScanner();
  const lines = stripAnsi(output).split(LINE_BREAK);
  for (let index = 0; index < lines.length; index++) scanner.scan(lines[index] as string, index);
  return scanner.result();
}
