import { execFile } from "node:child_process";
import { constants } from "node:fs";
import {
  access,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import {
  type AgentResult,
  createCodingAgentRuntime,
  createScriptedModel,
  type ModelAdapter,
} from "@pleach/coding-agent/runtime";
import {
  createApplyDiffTool,
  createGitCloneTool,
  createRunTestsTool,
  diffFileNames,
  showControlCharacters,
} from "@pleach/coding-agent/tools";
import { isToolError, type SandboxMode } from "@pleach/core";
import { createLocalSandbox, createLocalSandboxProvider } from "@pleach/sandbox";
import { type CliIo, parseCommandLine, parseMode, UsageError } from "../cli-support.js";
import { modelFromSpec, parseCount } from "./run.js";

const execFileAsync = promisify(execFile);

/** `pleach eval --help`. */
export const EVAL_HELP = `Usage: pleach eval <instances.jsonl> [options]
       pleach eval --dataset mini [options]

Evaluate an agent the way SWE-bench does. For each instance (one JSON object per line:
instance_id, repo, base_commit, problem_statement, test_patch, FAIL_TO_PASS, PASS_TO_PASS,
and optionally patch and test_command), in a fresh sandboxed workspace: clone the repo with
git_clone (a local path or file:// URL works offline; owner/name means GitHub and needs
--network), check out base_commit, let the agent work on the problem statement, apply the
test patch, run the tests, and call the instance resolved when every FAIL_TO_PASS and
PASS_TO_PASS test passes. Progress goes to stderr; a table (or JSON) to stdout.

Options:
  --model SPEC          gold    apply each instance's reference patch (through apply_diff)
                        empty   change nothing (a baseline that resolves nothing)
                        openai:<name> | anthropic:<name> | <base-url>, as in 'pleach run'
                        (default: $PLEACH_MODEL)
  --model-name NAME     the model name to send to a <base-url> server
  --dataset mini        build and run the bundled mini dataset (5 small local repositories)
  --dataset-dir DIR     build the mini dataset into DIR and keep it (default: a temporary folder)
  --test-command CMD    the test command for instances without test_command
  --concurrency N       instances run at once (default: 4)
  --max-steps N         the most model calls per instance (default: 50)
  --mode MODE           the agent's sandbox mode (default: workspace-write)
  --network             let sandboxed commands reach the network (remote repositories)
  --output FILE         also write the JSON report to FILE
  --json                print the JSON report instead of the table
  -h, --help            show this help

Test names are read from TAP output (node --test --test-reporter=tap, and any TAP
producer) and pytest's -rA / -v lines. Repositories under /tmp are not visible inside the
sandbox (it has a private /tmp): keep local repositories elsewhere.

Exit codes: 0 every instance was evaluated; 1 some could not be (clone or setup failed);
2 the command line was wrong.
`;

/** One evaluation instance, in SWE-bench's shape (plus `test_command`). */
export interface EvalInstance {
  instance_id: string;
  /** A git URL, a local path, or SWE-bench's `owner/name` (GitHub). */
  repo: string;
  base_commit: string;
  problem_statement: string;
  test_patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  /** The reference solution, used by `--model gold`. */
  patch?: string;
  /** The command that runs the tests; its output must name each test (TAP, pytest). */
  test_command?: string;
}

/** What happened to one instance. */
export interface InstanceReport {
  instance_id: string;
  resolved: boolean;
  /** `error`: the harness could not evaluate it (clone, checkout, test patch failed). */
  status: "resolved" | "unresolved" | "error";
  FAIL_TO_PASS: { passed: string[]; failed: string[] };
  PASS_TO_PASS: { passed: string[]; failed: string[] };
  agent?: { stopReason: string; steps: number; toolCalls: number; totalTokens: number };
  error?: string;
  durationMs: number;
}

/** The whole evaluation. */
export interface EvalReport {
  model: string;
  total: number;
  resolved: number;
  unresolved: number;
  errors: number;
  resolvedRate: number;
  instances: InstanceReport[];
}

/** The bundled mini dataset's sources, committed beside the package. */
export function miniDatasetSourcePath(): string {
  return fileURLToPath(new URL("../../assets/eval-mini/", import.meta.url));
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "pleach",
  GIT_AUTHOR_EMAIL: "pleach@example.invalid",
  GIT_COMMITTER_NAME: "pleach",
  GIT_COMMITTER_EMAIL: "pleach@example.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

async function git(args: string[], { cwd, date }: { cwd: string; date?: string }): Promise<string> {
  const env = { ...process.env, ...GIT_IDENTITY };
  if (date !== undefined) Object.assign(env, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
  const { stdout } = await execFileAsync("git", args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/**
 * A folder for repositories the sandbox must see. The sandbox has a private `/tmp`, so on hosts
 * where `os.tmpdir()` is `/tmp`, `/var/tmp` is used when writable.
 */
export async function sandboxVisibleTempParent(): Promise<string> {
  const temp = os.tmpdir();
  if (path.resolve(temp) !== "/tmp") return temp;
  try {
    await access("/var/tmp", constants.W_OK);
    return "/var/tmp";
  } catch {
    return temp;
  }
}

/**
 * Build the mini dataset into `directory`: one git repository per instance, made from the
 * committed sources (a base commit with the bug, then a later commit with the fix, so a harness
 * that forgets to check out `base_commit` is caught), and `instances.jsonl` naming them by
 * `file://` URL. Returns the path of `instances.jsonl`.
 */
export async function buildMiniDataset({ directory }: { directory: string }): Promise<string> {
  const source = miniDatasetSourcePath();
  const reposDirectory = path.join(directory, "repos");
  await mkdir(reposDirectory, { recursive: true });
  const lines: string[] = [];
  const names = (await readdir(source, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const name of names) {
    const instanceSource = path.join(source, name);
    const meta = JSON.parse(await readFile(path.join(instanceSource, "instance.json"), "utf8"));
    const goldPatch = await readFile(path.join(instanceSource, "gold.patch"), "utf8");
    const testPatch = await readFile(path.join(instanceSource, "test.patch"), "utf8");
    const repo = path.join(reposDirectory, name);
    await rm(repo, { recursive: true, force: true });
    await cp(path.join(instanceSource, "base"), repo, { recursive: true });
    await git(["init", "--quiet", "--initial-branch=main"], { cwd: repo });
    await git(["add", "--all"], { cwd: repo });
    await git(["commit", "--quiet", "--message", "Initial version"], {
      cwd: repo,
      date: "2026-01-01T00:00:00Z",
    });
    const baseCommit = await git(["rev-parse", "HEAD"], { cwd: repo });
    await writeFile(path.join(directory, `${name}.gold.patch`), goldPatch);
    await git(["apply", path.join(directory, `${name}.gold.patch`)], { cwd: repo });
    await rm(path.join(directory, `${name}.gold.patch`));
    await git(["commit", "--quiet", "--all", "--message", `Fix: ${name}`], {
      cwd: repo,
      date: "2026-01-02T00:00:00Z",
    });
    const instance: EvalInstance = {
      instance_id: `pleach-mini__${name}`,
      repo: pathToFileURL(repo).href,
      base_commit: baseCommit,
      problem_statement: meta.problem_statement,
      patch: goldPatch,
      test_patch: testPatch,
      FAIL_TO_PASS: meta.FAIL_TO_PASS,
      PASS_TO_PASS: meta.PASS_TO_PASS,
      test_command: meta.test_command,
    };
    lines.push(JSON.stringify(instance));
  }
  const file = path.join(directory, "instances.jsonl");
  await writeFile(file, `${lines.join("\n")}\n`);
  return file;
}

function nameList(value: unknown, field: string, where: string): string[] {
  // SWE-bench stores these lists as JSON text; a plain array is accepted too.
  const list = typeof value === "string" ? JSON.parse(value) : value;
  if (!Array.isArray(list) || !list.every((item) => typeof item === "string")) {
    throw new UsageError(`${where}: ${field} must be a list of test names`, { command: "eval" });
  }
  return list;
}

/** Read a JSONL file of instances, checking each has the fields the harness needs. */
export async function readInstances(file: string): Promise<EvalInstance[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`, { command: "eval" });
  }
  const instances: EvalInstance[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const where = `${file} line ${index + 1}`;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw new UsageError(`${where} is not JSON: ${(error as Error).message}`, {
        command: "eval",
      });
    }
    for (const field of ["instance_id", "repo", "base_commit", "problem_statement", "test_patch"]) {
      if (typeof record[field] !== "string") {
        throw new UsageError(`${where}: ${field} is missing (a string is needed)`, {
          command: "eval",
        });
      }
    }
    instances.push({
      ...(record as unknown as EvalInstance),
      FAIL_TO_PASS: nameList(record.FAIL_TO_PASS, "FAIL_TO_PASS", where),
      PASS_TO_PASS: nameList(record.PASS_TO_PASS ?? [], "PASS_TO_PASS", where),
    });
  });
  if (instances.length === 0) {
    throw new UsageError(`${file} holds no instances`, { command: "eval" });
  }
  return instances;
}

/**
 * Each test's outcome by name, from TAP (`ok 3 - name`, `not ok 4 - name`, any indentation) and
 * pytest (`PASSED path::name` with -rA, `path::name PASSED` with -v). A later line wins.
 */
export function parseTestStatuses(output: string): Map<string, "pass" | "fail"> {
  const statuses = new Map<string, "pass" | "fail">();
  for (const rawLine of output.split("\n")) {
    const line = rawLine.replace(/\r$/, "");
    const tap = /^\s*(not )?ok \d+(?: -)? (.+?)(?:\s+#\s*(SKIP|TODO)\b.*)?$/i.exec(line);
    if (tap !== null) {
      const name = (tap[2] ?? "").trim();
      if (tap[3] === undefined) statuses.set(name, tap[1] === undefined ? "pass" : "fail");
      continue;
    }
    const summary = /^(PASSED|FAILED|ERROR) (\S+)/.exec(line);
    if (summary !== null) {
      statuses.set(summary[2] ?? "", summary[1] === "PASSED" ? "pass" : "fail");
      continue;
    }
    const verbose = /^(\S+::\S+) (PASSED|FAILED|ERROR)\b/.exec(line);
    if (verbose !== null) statuses.set(verbose[1] ?? "", verbose[2] === "PASSED" ? "pass" : "fail");
  }
  return statuses;
}

function repoURL(repo: string): string {
  if (/^[\w.-]+\/[\w.-]+$/.test(repo) && !repo.startsWith(".")) {
    return `https://github.com/${repo}.git`;
  }
  return repo;
}

/** The pseudo-models of `--model gold` and `--model empty`, made per instance. */
function pseudoModel(spec: string, instance: EvalInstance): ModelAdapter {
  if (spec === "empty") {
    return createScriptedModel({ steps: [{ text: "I make no change." }], name: "empty" });
  }
  const patch = instance.patch;
  if (patch === undefined || patch === "") {
    throw new Error(`${instance.instance_id} has no reference patch for --model gold`);
  }
  // Read every file first: the session's file state refuses changes to unread files.
  return createScriptedModel({
    name: "gold",
    steps: [
      {
        text: "Reading the files the reference patch changes.",
        toolCalls: diffFileNames(patch).map((file) => ({
          name: "read_file",
          input: { path: file },
        })),
      },
      { toolCalls: [{ name: "apply_diff", input: { path: ".", diff: patch } }] },
      { text: "Applied the reference patch." },
    ],
  });
}

function taskFor(instance: EvalInstance): string {
  return `You are working in a git repository (the workspace root). Resolve this issue:

<issue>
${instance.problem_statement}
</issue>

Change the source code so the issue is fixed. Do not change the existing tests; you may add your own checks while you work. Finish with a short summary of the change.`;
}

interface EvaluateOptions {
  instance: EvalInstance;
  makeModel: (instance: EvalInstance) => ModelAdapter;
  mode: SandboxMode;
  network: boolean;
  maxSteps: number;
  testCommand: string | undefined;
  abortSignal: AbortSignal;
}

/** Evaluate one instance in a fresh workspace from the local sandbox provider. */
export async function evaluateInstance({
  instance,
  makeModel,
  mode,
  network,
  maxSteps,
  testCommand,
  abortSignal,
}: EvaluateOptions): Promise<InstanceReport> {
  const started = Date.now();
  const report: InstanceReport = {
    instance_id: instance.instance_id,
    resolved: false,
    status: "error",
    FAIL_TO_PASS: { passed: [], failed: [...instance.FAIL_TO_PASS] },
    PASS_TO_PASS: { passed: [], failed: [...instance.PASS_TO_PASS] },
    durationMs: 0,
  };
  const provider = createLocalSandboxProvider({ mode: "workspace-write", network });
  const session = await provider.acquire({ abortSignal });
  try {
    const command = instance.test_command ?? testCommand;
    if (command === undefined) {
      throw new Error("no test command: add test_command to the instance or pass --test-command");
    }
    await createGitCloneTool(session.client).execute(
      { url: repoURL(instance.repo), dest: "repo" },
      { abortSignal },
    );
    const repoRoot = path.join(session.client.root, "repo");
    // The harness checks out as itself: the sandbox never lets a command write a .git folder.
    await git(["checkout", "--quiet", "--detach", instance.base_commit], { cwd: repoRoot });

    const runtime = createCodingAgentRuntime({
      sandboxProvider: createLocalSandboxProvider({ root: repoRoot, mode, network }),
      model: makeModel(instance),
      maxSteps,
    });
    const result: AgentResult = await runtime.run({ task: taskFor(instance), abortSignal }).result;
    report.agent = {
      stopReason: result.stopReason,
      steps: result.steps,
      toolCalls: result.toolCalls,
      totalTokens: result.usage.totalTokens,
    };

    const repoClient = await createLocalSandbox({
      root: repoRoot,
      mode: "workspace-write",
      network,
    });
    const applied = await createApplyDiffTool(repoClient).execute(
      { path: ".", diff: instance.test_patch },
      { abortSignal },
    );
    if (applied.conflicts.length > 0) {
      throw new Error(`the test patch did not apply: ${applied.conflicts.join("; ")}`);
    }
    const tests = await createRunTestsTool(repoClient).execute(
      { command, timeout: 600_000 },
      { abortSignal },
    );
    const statuses = parseTestStatuses(`${tests.stdout}\n${tests.stderr}`);
    const split = (names: string[]) => ({
      passed: names.filter((name) => statuses.get(name) === "pass"),
      failed: names.filter((name) => statuses.get(name) !== "pass"),
    });
    report.FAIL_TO_PASS = split(instance.FAIL_TO_PASS);
    report.PASS_TO_PASS = split(instance.PASS_TO_PASS);
    report.resolved =
      report.FAIL_TO_PASS.failed.length === 0 && report.PASS_TO_PASS.failed.length === 0;
    report.status = report.resolved ? "resolved" : "unresolved";
  } catch (error) {
    report.status = "error";
    report.error = isToolError(error)
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
  } finally {
    await session.release();
    report.durationMs = Date.now() - started;
  }
  return report;
}

/** Run `work` over `items`, at most `concurrency` at a time, keeping the order of `items`. */
async function mapConcurrently<Item, Result>(
  items: readonly Item[],
  concurrency: number,
  work: (item: Item, index: number) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as Item, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(1)}s`;
}

/**
 * The report as a table a person reads. Ids and errors come from the dataset and the repository,
 * so their control characters are made visible.
 */
export function formatEvalTable(report: EvalReport): string {
  const rows = report.instances.map((instance) => {
    const f2p = instance.FAIL_TO_PASS;
    const p2p = instance.PASS_TO_PASS;
    return [
      showControlCharacters(instance.instance_id),
      instance.status,
      `${f2p.passed.length}/${f2p.passed.length + f2p.failed.length}`,
      `${p2p.passed.length}/${p2p.passed.length + p2p.failed.length}`,
      instance.agent === undefined ? "-" : String(instance.agent.steps),
      seconds(instance.durationMs),
    ];
  });
  const header = ["instance", "result", "FAIL_TO_PASS", "PASS_TO_PASS", "steps", "time"];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const format = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  const errors = report.instances
    .filter((instance) => instance.error !== undefined)
    .map(
      (instance) =>
        `  ${showControlCharacters(instance.instance_id)}: ${showControlCharacters(instance.error ?? "", { multiline: true })}`,
    );
  const percent = (report.resolvedRate * 100).toFixed(1).replace(/\.0$/, "");
  return [
    format(header),
    ...rows.map(format),
    "",
    `model ${report.model}: resolved ${report.resolved} of ${report.total} (${percent}%), unresolved ${report.unresolved}, errors ${report.errors}`,
    ...(errors.length > 0 ? ["", "errors:", ...errors] : []),
    "",
  ].join("\n");
}

/** `pleach eval`: evaluate instances; resolves to the exit code. */
export async function evalCommand({
  args,
  io,
}: {
  args: readonly string[];
  io: CliIo;
}): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    command: "eval",
    options: {
      model: { type: "string" },
      "model-name": { type: "string" },
      dataset: { type: "string" },
      "dataset-dir": { type: "string" },
      "test-command": { type: "string" },
      concurrency: { type: "string" },
      "max-steps": { type: "string" },
      mode: { type: "string" },
      network: { type: "boolean" },
      output: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    io.stdout(EVAL_HELP);
    return 0;
  }
  const [instancesFile, ...extra] = positionals;
  if (extra.length > 0) {
    throw new UsageError(`unexpected arguments: ${extra.join(" ")}`, { command: "eval" });
  }
  if (values.dataset !== undefined && values.dataset !== "mini") {
    throw new UsageError(`--dataset must be mini, got ${JSON.stringify(values.dataset)}`, {
      command: "eval",
    });
  }
  if ((instancesFile === undefined) === (values.dataset === undefined)) {
    throw new UsageError("give either an instances.jsonl file or --dataset mini", {
      command: "eval",
    });
  }
  const env = io.env ?? {};
  const spec = values.model ?? env.PLEACH_MODEL;
  const pseudo = spec === "gold" || spec === "empty";
  const realModel = pseudo
    ? undefined
    : modelFromSpec({ spec, env, modelName: values["model-name"], command: "eval" });
  const makeModel = (instance: EvalInstance): ModelAdapter =>
    realModel ?? pseudoModel(spec as string, instance);
  const mode = parseMode({ mode: values.mode, command: "eval" });
  const concurrency = parseCount({
    value: values.concurrency,
    option: "--concurrency",
    command: "eval",
    fallback: 4,
  });
  const maxSteps = parseCount({
    value: values["max-steps"],
    option: "--max-steps",
    command: "eval",
    fallback: 50,
  });

  let temporary: string | undefined;
  try {
    let file: string;
    if (values.dataset === "mini") {
      if (values["dataset-dir"] === undefined) {
        temporary = await realpath(
          await mkdtemp(path.join(await sandboxVisibleTempParent(), "pleach-eval-mini-")),
        );
      }
      const directory = temporary ?? path.resolve(io.cwd, values["dataset-dir"] as string);
      file = await buildMiniDataset({ directory });
      io.stderr(`pleach eval: built the mini dataset: ${file}\n`);
    } else {
      file = path.resolve(io.cwd, instancesFile as string);
    }
    const instances = await readInstances(file);
    const modelName = realModel?.name ?? (spec as string);
    io.stderr(
      `pleach eval: ${instances.length} instance(s), model ${modelName}, ${Math.min(concurrency, instances.length)} at a time\n`,
    );
    const controller = new AbortController();
    const onInterrupt = () => controller.abort();
    process.once("SIGINT", onInterrupt);
    let finished = 0;
    let resolvedSoFar = 0;
    let reports: InstanceReport[];
    try {
      reports = await mapConcurrently(instances, concurrency, async (instance) => {
        io.stderr(`  started  ${showControlCharacters(instance.instance_id)}\n`);
        const report = await evaluateInstance({
          instance,
          makeModel,
          mode,
          network: values.network ?? false,
          maxSteps,
          testCommand: values["test-command"],
          abortSignal: controller.signal,
        });
        finished += 1;
        if (report.resolved) resolvedSoFar += 1;
        io.stderr(
          `  [${finished}/${instances.length}] ${showControlCharacters(report.instance_id)}: ${report.status}${report.error === undefined ? "" : ` (${showControlCharacters(report.error.split("\n")[0] ?? "")})`} in ${seconds(report.durationMs)} — ${resolvedSoFar} resolved so far\n`,
        );
        return report;
      });
    } finally {
      process.off("SIGINT", onInterrupt);
    }
    const resolved = reports.filter((report) => report.status === "resolved").length;
    const errors = reports.filter((report) => report.status === "error").length;
    const report: EvalReport = {
      model: modelName,
      total: reports.length,
      resolved,
      unresolved: reports.length - resolved - errors,
      errors,
      resolvedRate: reports.length === 0 ? 0 : resolved / reports.length,
      instances: reports,
    };
    const json = `${JSON.stringify(report, null, 2)}\n`;
    if (values.output !== undefined) await writeFile(path.resolve(io.cwd, values.output), json);
    io.stdout(
      values.json ? showControlCharacters(json, { multiline: true }) : formatEvalTable(report),
    );
    return errors > 0 ? 1 : 0;
  } finally {
    if (temporary !== undefined) await rm(temporary, { recursive: true, force: true });
  }
}
