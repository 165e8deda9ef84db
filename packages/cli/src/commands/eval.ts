import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ModelAdapter } from "@pleach/coding-agent/runtime";
import { showControlCharacters } from "@pleach/coding-agent/tools";
import {
  type CommandInput,
  counted,
  domainOptionsHelp,
  NETWORK_OPTIONS,
  parseCommandLine,
  parseMode,
  parseNetworkFlags,
  UsageError,
} from "../cli-support.js";
import { evaluateAll } from "../eval/evaluate.js";
import { htmlReport } from "../eval/html-report.js";
import { type EvalInstance, readInstances } from "../eval/instances.js";
import { buildMiniDataset, sandboxVisibleTempParent } from "../eval/mini-dataset.js";
import { isPseudoModel, type PseudoModelName, pseudoModel } from "../eval/pseudo-models.js";
import { formatEvalTable } from "../eval/report.js";
import { swebenchRunReport } from "../eval/swebench-report.js";
import { unknownImagePlaceholders, type WorkspaceOptions } from "../eval/workspaces.js";
import { parseReadFlags, READ_OPTIONS, readOptionsHelp } from "../read-flags.js";
import { modelFromSpec, parseCount } from "./run.js";

/** The options `pleach eval` takes. */
export const EVAL_OPTIONS = {
  model: { type: "string" },
  "model-name": { type: "string" },
  dataset: { type: "string" },
  "dataset-dir": { type: "string" },
  "test-command": { type: "string" },
  concurrency: { type: "string" },
  "max-steps": { type: "string" },
  mode: { type: "string" },
  ...NETWORK_OPTIONS,
  ...READ_OPTIONS,
  image: { type: "string" },
  "sandbox-image": { type: "string" },
  output: { type: "string" },
  html: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** How `pleach eval` is used: the first line of its help and its line in `pleach help`. */
export const EVAL_USAGE = `pleach eval <instances.jsonl> | --dataset mini [--dataset-dir DIR] [--model SPEC]
    [--model-name NAME] [--test-command CMD] [--concurrency N] [--max-steps N]
    [--mode MODE] [--network] [--allow-domain HOST]... [--deny-domain HOST]...
    [--image TEMPLATE [--sandbox-image NAME]] [--output FILE] [--html FILE] [--json]
    [--hide-read PATH]... [--allow-read PATH]... [--no-caches] [--allow-git-writes] [--allow-write DIR]...`;

/** `pleach eval --help`. */
export const EVAL_HELP = `Usage: ${EVAL_USAGE}

Evaluate an agent the way SWE-bench does. For each instance (one JSON object per line:
instance_id, repo, base_commit, problem_statement, test_patch, FAIL_TO_PASS, PASS_TO_PASS,
and optionally version, patch and test_command), in a fresh sandboxed workspace: clone the
repo with git_clone (a git URL or a local path works offline; owner/name means GitHub and
needs --network, unless a folder of that path exists here), check out base_commit, let the
agent work on the problem statement, apply the test patch, run the tests (SWE-bench's own
command for its repositories), read them as SWE-bench's harness does, and resolve by its rules.
A timeout, or output naming no test, is an error. With --image, each instance runs in its
Docker image instead, whose /testbed already holds the repository at base_commit. Progress
goes to stderr; a table (or JSON) to stdout.

Options:
  --model SPEC          gold    apply each instance's reference patch (through apply_diff)
                        empty   change nothing (a baseline that resolves nothing)
                        openai:<name> | anthropic:<name> | <base-url>, as in 'pleach run'
                        (default: $PLEACH_MODEL)
  --model-name NAME     the model name to send to a <base-url> server
  --dataset mini        build and run the bundled mini dataset (5 small local repositories)
  --dataset-dir DIR     build the mini dataset into DIR and keep it (default: a temporary folder)
  --test-command CMD    the test command for instances without test_command (default:
                        SWE-bench's, for SWE-bench Lite's and Verified's repositories)
  --concurrency N       instances run at once (default: 4)
  --max-steps N         the most model calls per instance (default: 50)
  --mode MODE           the agent's sandbox mode (default: workspace-write)
  --network             let sandboxed commands reach the network (remote repositories)
${domainOptionsHelp(24)}
  --image TEMPLATE      run each instance in its Docker image, whose /testbed holds the
                        repository at base_commit (no clone); {instance_id} and {hub_id}
                        name it: SWE-bench's images are
                        'swebench/sweb.eval.x86_64.{hub_id}:latest'
                        ({hub_id}: the id lower-cased, its __ written _1776_)
  --sandbox-image NAME  the pleach sandbox image whose server runs in those containers,
                        mounted read-only (default: pleach-sandbox:dev, built by
                        scripts/build-sandbox-image.sh)
  --output FILE         write SWE-bench's report (resolved_ids, ..., and each instance's
                        tests_status) to FILE
  --html FILE           write an HTML report to FILE: resolved rate, a chart per
                        repository, each instance's log
  --json                print the JSON report instead of the table
${readOptionsHelp(24)}
  -h, --help            show this help

Test names are read from TAP output (node --test --test-reporter=tap, and any TAP
producer) and pytest's -rA / -v lines. Repositories under /tmp are not visible inside the
sandbox (it has a private /tmp): keep local repositories elsewhere.

Exit codes: 0 every instance was evaluated; 1 some could not be (clone or setup failed);
2 the command line was wrong.
`;

/** `pleach eval`: evaluate instances; resolves to the exit code. */
export async function evalCommand({ args, io }: CommandInput): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    command: "eval",
    options: EVAL_OPTIONS,
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
  const realModel = isPseudoModel(spec)
    ? undefined
    : modelFromSpec({ spec, env, modelName: values["model-name"], command: "eval" });
  const makeModel = (instance: EvalInstance): ModelAdapter =>
    realModel ?? pseudoModel(spec as PseudoModelName, instance);
  const mode = parseMode({ mode: values.mode, command: "eval" });
  const concurrency = parseCount({
    value: values.concurrency,
    option: "--concurrency",
    command: "eval",
    fallback: 4,
  });
  const image = parseImage(values);
  const reads = parseReadFlags(values, io);
  const network = parseNetworkFlags(values, "eval");
  if (image !== undefined && typeof network !== "boolean") {
    throw new UsageError(
      "--allow-domain and --deny-domain do not reach into --image containers, whose network is all or nothing: use --network, or neither",
      { command: "eval" },
    );
  }
  if (image !== undefined && reads.hideReads.length + reads.allowReads.length > 0) {
    throw new UsageError(
      "--hide-read and --allow-read apply to this machine's files; --image containers hold only the image's: leave them out",
      { command: "eval" },
    );
  }
  if (image !== undefined && mode === "read-only") {
    throw new UsageError(
      "--image runs the agent, the test patch and the tests in one container: --mode read-only would keep the test patch out; use workspace-write",
      { command: "eval" },
    );
  }
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
      `pleach eval: ${counted(instances.length, "instance")}, model ${modelName}, ${Math.min(concurrency, instances.length)} at a time\n`,
    );
    const { report, details } = await evaluateAll({
      instances,
      model: modelName,
      concurrency,
      progress: io.stderr,
      makeModel,
      mode,
      network,
      reads,
      maxSteps,
      testCommand: values["test-command"],
      cwd: io.cwd,
      image,
    });
    const json = `${JSON.stringify(report, null, 2)}\n`;
    if (values.output !== undefined) {
      await writeFile(
        path.resolve(io.cwd, values.output),
        `${JSON.stringify(swebenchRunReport(report, details), null, 2)}\n`,
      );
    }
    if (values.html !== undefined) {
      await writeFile(path.resolve(io.cwd, values.html), htmlReport(report, details));
    }
    io.stdout(
      values.json ? showControlCharacters(json, { multiline: true }) : formatEvalTable(report),
    );
    return report.errors > 0 ? 1 : 0;
  } finally {
    if (temporary !== undefined) await rm(temporary, { recursive: true, force: true });
  }
}

/** `--image` and `--sandbox-image`, checked. */
function parseImage(values: {
  image?: string;
  "sandbox-image"?: string;
}): WorkspaceOptions["image"] {
  if (values.image === undefined) {
    if (values["sandbox-image"] !== undefined) {
      throw new UsageError("--sandbox-image goes with --image", { command: "eval" });
    }
    return undefined;
  }
  const unknown = unknownImagePlaceholders(values.image);
  if (unknown.length > 0) {
    throw new UsageError(
      `--image ${values.image}: unknown placeholder ${unknown.map((name) => `{${name}}`).join(", ")}; use {instance_id} or {hub_id}`,
      { command: "eval" },
    );
  }
  return { template: values.image, runtimeImage: values["sandbox-image"] ?? "pleach-sandbox:dev" };
}
