import { shellQuote, type TestVerdict } from "@pleach/coding-agent/tools";
import type { EvalInstance } from "./instances.js";

/**
 * The log parsers of SWE-bench's harness (its `MAP_REPO_TO_PARSER`), by what they read:
 * pytest's `-rA` and `-v` lines (`pytest-options` also shortens a parameter that is a path to its
 * last part, `matplotlib` writes `MouseButton.LEFT` as `1`, `seaborn` reads only passes and
 * failures), django's `--verbosity 2` lines, sympy's `--verbose` lines.
 */
export type LogParser = "pytest" | "pytest-options" | "matplotlib" | "seaborn" | "django" | "sympy";

/** A test's status as SWE-bench records it. A status it does not record leaves the test out. */
export type SweBenchStatus = "PASSED" | "FAILED" | "SKIPPED" | "ERROR" | "XFAIL";

interface RepositorySpec {
  parser: LogParser;
  /** The test command before the test files, for the instance's `version`. */
  command: (version: string | undefined) => string;
}

const PYTEST = "pytest -rA";
const pytest = (parser: LogParser = "pytest"): RepositorySpec => ({
  parser,
  command: () => PYTEST,
});
/** astropy's versions before 3.0 ran pytest verbosely, with the classic progress output. */
const ASTROPY_VERBOSE_VERSIONS = new Set(["0.1", "0.2", "0.3", "0.4", "1.1", "1.2", "1.3"]);
const DJANGO = "./tests/runtests.py --verbosity 2";

/** SWE-bench Lite's and Verified's repositories: the test command and log parser of each. */
const REPOSITORIES: Readonly<Record<string, RepositorySpec>> = {
  "astropy/astropy": {
    parser: "pytest",
    command: (version) =>
      version !== undefined && ASTROPY_VERBOSE_VERSIONS.has(version)
        ? "pytest -rA -vv -o console_output_style=classic --tb=no -p no:nose"
        : PYTEST,
  },
  "django/django": {
    parser: "django",
    command: (version) =>
      version === "1.9" ? DJANGO : `${DJANGO} --settings=test_sqlite --parallel 1`,
  },
  "matplotlib/matplotlib": pytest("matplotlib"),
  "mwaskom/seaborn": { parser: "seaborn", command: () => "pytest --no-header -rA" },
  "pallets/flask": pytest(),
  "psf/requests": pytest("pytest-options"),
  "pydata/xarray": pytest(),
  "pylint-dev/pylint": pytest("pytest-options"),
  "pytest-dev/pytest": pytest(),
  "scikit-learn/scikit-learn": pytest(),
  "sphinx-doc/sphinx": { parser: "pytest", command: () => "tox --current-env -epy39 -v --" },
  "sympy/sympy": {
    parser: "sympy",
    command: () =>
      "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose",
  },
};

/** The log parser SWE-bench uses for `repo` (`owner/name`); undefined for other repositories. */
export function sweBenchParser(repo: string): LogParser | undefined {
  return Object.hasOwn(REPOSITORIES, repo) ? REPOSITORIES[repo]?.parser : undefined;
}

/** Files a test patch changes that SWE-bench never passes to the test command. */
const NON_TEST_ENDINGS = [
  ".json",
  ".png",
  "csv",
  ".txt",
  ".md",
  ".jpg",
  ".jpeg",
  ".pkl",
  ".yml",
  ".yaml",
  ".toml",
];

/**
 * The tests SWE-bench runs: the files the test patch changes, but data files; for django, as
 * modules of its `tests/` folder (`tests/a/tests.py` is `a.tests`).
 */
function testDirectives(instance: EvalInstance): string[] {
  const files = [...instance.test_patch.matchAll(/^diff --git a\/.* b\/(.*)$/gm)]
    .map((match) => match[1] as string)
    .filter((file) => !NON_TEST_ENDINGS.some((ending) => file.endsWith(ending)));
  if (instance.repo !== "django/django") return files;
  return files.map((file) =>
    file
      .replace(/\.py$/, "")
      .replace(/^tests\//, "")
      .replaceAll("/", "."),
  );
}

/**
 * SWE-bench's test command for the instance (its `MAP_REPO_VERSION_TO_SPECS` test_cmd, then the
 * test files of the test patch, each quoted for the shell), or undefined when the repository is
 * not one of SWE-bench Lite's and Verified's.
 */
export function sweBenchTestCommand(instance: EvalInstance): string | undefined {
  if (!Object.hasOwn(REPOSITORIES, instance.repo)) return undefined;
  const spec = REPOSITORIES[instance.repo] as RepositorySpec;
  return [spec.command(instance.version), ...testDirectives(instance).map(shellQuote)].join(" ");
}

/** Which statuses each parser records; the rest leave the test out of its map. */
const RECORDED: Record<LogParser | "any", ReadonlySet<SweBenchStatus>> = {
  pytest: new Set(["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"]),
  "pytest-options": new Set(["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"]),
  matplotlib: new Set(["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"]),
  seaborn: new Set(["PASSED", "FAILED"]),
  django: new Set(["PASSED", "FAILED", "ERROR", "SKIPPED"]),
  sympy: new Set(["PASSED", "FAILED", "ERROR"]),
  any: new Set(["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"]),
};

const SWE_BENCH_STATUS = {
  passed: "PASSED",
  failed: "FAILED",
  error: "ERROR",
  skipped: "SKIPPED",
  xfail: "XFAIL",
  xpass: undefined,
} as const;

/** The runner whose lines each parser reads. */
function readsRunner(parser: LogParser | undefined, runner: TestVerdict["runner"]): boolean {
  if (parser === undefined) return true;
  if (parser === "django") return runner === "unittest";
  if (parser === "sympy") return runner === "sympy";
  return runner === "pytest";
}

/** `pytest-options`: a parameter that is an absolute path is shortened to its last part. */
function shortenPathOption(name: string): string {
  const match = /^(.*?)\[(.*)\]$/s.exec(name);
  const option = match?.[2];
  if (match === null || option === undefined) return name;
  if (!option.startsWith("/") || option.startsWith("//") || option.includes("*")) return name;
  return `${match[1]}[/${option.split("/").at(-1)}]`;
}

/** The names SWE-bench may know a test by: its own, and for pytest what it cut at a space. */
function keysOf(verdict: TestVerdict, parser: LogParser | undefined): string[] {
  let name = verdict.name;
  if (parser === "matplotlib") {
    name = name.replaceAll("MouseButton.LEFT", "1").replaceAll("MouseButton.RIGHT", "3");
  }
  const names = [name];
  // SWE-bench's parsers take the id up to its first space, so the names its datasets hold for
  // parameters with spaces are cut there (`test_x[a b]` is `test_x[a`).
  const cut = verdict.runner === "pytest" ? name.split(/\s/)[0] : undefined;
  if (cut !== undefined && cut !== name) names.push(cut);
  return parser === "pytest-options" ? names.map(shortenPathOption) : names;
}

/**
 * Each test's status as SWE-bench's harness records it, from the output's verdicts (see
 * `readTestOutput`): only the lines of the parser's runner, only the statuses it records (an
 * unexpected pass never is; sympy records no skip or expected failure, seaborn only passes and
 * failures), under the names it gives. A later line wins. With no parser (a repository SWE-bench
 * does not know), every runner's lines are read and recorded as pytest's parser would.
 */
export function sweBenchStatuses(
  verdicts: readonly TestVerdict[],
  parser: LogParser | undefined,
): Map<string, SweBenchStatus> {
  const recorded = RECORDED[parser ?? "any"];
  const statuses = new Map<string, SweBenchStatus>();
  for (const verdict of verdicts) {
    const status = SWE_BENCH_STATUS[verdict.status];
    if (status === undefined || !recorded.has(status) || !readsRunner(parser, verdict.runner)) {
      continue;
    }
    for (const key of keysOf(verdict, parser)) statuses.set(key, status);
  }
  return statuses;
}
