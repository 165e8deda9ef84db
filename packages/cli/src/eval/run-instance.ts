import path from "node:path";
import {
  type AgentResult,
  createCodingAgentRuntime,
  type ModelAdapter,
} from "@pleach/coding-agent/runtime";
import {
  createApplyDiffTool,
  createGitCloneTool,
  createRunTestsTool,
} from "@pleach/coding-agent/tools";
import { isToolError, type SandboxMode } from "@pleach/core";
import {
  createLocalSandbox,
  createLocalSandboxProvider,
  type NetworkOption,
} from "@pleach/sandbox";
import type { ReadFlags } from "../cli-support.js";
import { git } from "./git.js";
import { gradeInstance } from "./grading.js";
import type { EvalInstance } from "./instances.js";
import type { InstanceReport } from "./report.js";
import { repositorySource } from "./repository-source.js";
import { sweBenchTestCommand } from "./swe-bench.js";

/** Options of {@link evaluateInstance}. */
export interface EvaluateInstanceOptions {
  instance: EvalInstance;
  makeModel: (instance: EvalInstance) => ModelAdapter;
  /** The agent's sandbox mode. */
  mode: SandboxMode;
  /** Which network sandboxed commands may reach (remote repositories): `--network` or domains. */
  network: NetworkOption;
  /** Paths hidden from sandboxed commands besides the defaults, and those given back. @default none */
  reads?: ReadFlags;
  maxSteps: number;
  /** The test command of instances without `test_command`; else SWE-bench's for its repositories. */
  testCommand: string | undefined;
  /** The folder a relative `repo` path is resolved from. @default process.cwd() */
  cwd?: string;
  abortSignal: AbortSignal;
}

/** How long the instance's tests may run. */
const TEST_TIMEOUT_MS = 600_000;

function taskFor(instance: EvalInstance): string {
  return `You are working in a git repository (the workspace root). Resolve this issue:

<issue>
${instance.problem_statement}
</issue>

Change the source code so the issue is fixed. Do not change the existing tests; you may add your own checks while you work. Finish with a short summary of the change.`;
}

/**
 * Evaluate one instance in a fresh workspace from the local sandbox provider: clone, check out
 * `base_commit`, let the agent work, apply the test patch, run the tests and grade them. A step
 * that fails makes the report's status `error`, with the reason; it never throws.
 */
export async function evaluateInstance({
  instance,
  makeModel,
  mode,
  network,
  reads = { hideReads: [], allowReads: [] },
  maxSteps,
  testCommand,
  cwd = process.cwd(),
  abortSignal,
}: EvaluateInstanceOptions): Promise<InstanceReport> {
  const started = Date.now();
  const report: InstanceReport = {
    instance_id: instance.instance_id,
    resolved: false,
    status: "error",
    FAIL_TO_PASS: { passed: [], failed: [...instance.FAIL_TO_PASS] },
    PASS_TO_PASS: { passed: [], failed: [...instance.PASS_TO_PASS] },
    durationMs: 0,
  };
  const provider = createLocalSandboxProvider({ mode: "workspace-write", network, ...reads });
  const session = await provider.acquire({ abortSignal });
  try {
    const command = instance.test_command ?? testCommand ?? sweBenchTestCommand(instance);
    if (command === undefined) {
      throw new Error(
        "no test command: add test_command to the instance or pass --test-command (SWE-bench's own repositories get theirs from repo and version)",
      );
    }
    await createGitCloneTool(session.client).execute(
      { url: await repositorySource(instance.repo, cwd), dest: "repo" },
      { abortSignal },
    );
    const repoRoot = path.join(session.client.root, "repo");
    // The harness checks out as itself: the sandbox never lets a command write a .git folder.
    await git(["checkout", "--quiet", "--detach", instance.base_commit], { cwd: repoRoot });

    const runtime = createCodingAgentRuntime({
      sandboxProvider: createLocalSandboxProvider({ root: repoRoot, mode, network, ...reads }),
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
      ...reads,
    });
    const applied = await createApplyDiffTool(repoClient).execute(
      { path: ".", diff: instance.test_patch },
      { abortSignal },
    );
    if (applied.conflicts.length > 0) {
      throw new Error(`the test patch did not apply: ${applied.conflicts.join("; ")}`);
    }
    const tests = await createRunTestsTool(repoClient).execute(
      { command, timeout: TEST_TIMEOUT_MS },
      { abortSignal },
    );
    const grade = gradeInstance(instance, {
      output: `${tests.stdout}\n${tests.stderr}`,
      timedOut: tests.timedOut,
      timeoutMs: TEST_TIMEOUT_MS,
    });
    report.FAIL_TO_PASS = grade.FAIL_TO_PASS;
    report.PASS_TO_PASS = grade.PASS_TO_PASS;
    report.statuses = grade.statuses;
    report.resolved = grade.resolved;
    report.status = grade.status;
    if (grade.error !== undefined) report.error = grade.error;
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
