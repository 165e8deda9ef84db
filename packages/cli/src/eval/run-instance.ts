import {
  type AgentResult,
  createCodingAgentRuntime,
  type ModelAdapter,
} from "@pleach/coding-agent/runtime";
import { createApplyDiffTool, createRunTestsTool } from "@pleach/coding-agent/tools";
import { isToolError } from "@pleach/core";
import { formatAgentEvent } from "../commands/demo.js";
import { agentSessions } from "./agent-sessions.js";
import { gradeInstance } from "./grading.js";
import type { EvalInstance } from "./instances.js";
import type { InstanceDetails, InstanceReport } from "./report.js";
import { sweBenchTestCommand } from "./swe-bench.js";
import { changedFiles, instanceWorkspace, type WorkspaceOptions } from "./workspaces.js";

/** Options of {@link evaluateInstance}. */
export interface EvaluateInstanceOptions extends WorkspaceOptions {
  instance: EvalInstance;
  makeModel: (instance: EvalInstance) => ModelAdapter;
  maxSteps: number;
  /** The test command of instances without `test_command`; else SWE-bench's for its repositories. */
  testCommand: string | undefined;
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
 * Evaluate one instance in its workspace (a local clone at `base_commit`, or the instance's image;
 * see {@link instanceWorkspace}): let the agent work, end every process of its sessions, note the
 * files it changed, apply the test patch, run the tests (in a sandbox of the harness) and grade them. A step that fails makes the report's status `error`, with
 * the reason; it never throws. The details (the agent's steps, the test output) are for the HTML
 * report.
 */
export async function evaluateInstance({
  instance,
  makeModel,
  maxSteps,
  testCommand,
  abortSignal,
  ...where
}: EvaluateInstanceOptions): Promise<{ report: InstanceReport; details: InstanceDetails }> {
  const started = Date.now();
  const report: InstanceReport = {
    instance_id: instance.instance_id,
    resolved: false,
    status: "error",
    FAIL_TO_PASS: { passed: [], failed: [...instance.FAIL_TO_PASS] },
    PASS_TO_PASS: { passed: [], failed: [...instance.PASS_TO_PASS] },
    durationMs: 0,
  };
  const details: InstanceDetails = { repo: instance.repo, testsRan: false, agentLog: [] };
  let release: (() => Promise<void>) | undefined;
  let endAgent: (() => Promise<void>) | undefined;
  try {
    const command = instance.test_command ?? testCommand ?? sweBenchTestCommand(instance);
    if (command === undefined) {
      throw new Error(
        "no test command: add test_command to the instance or pass --test-command (SWE-bench's own repositories get theirs from repo and version)",
      );
    }
    const workspace = await instanceWorkspace(instance, where, abortSignal);
    release = workspace.release;

    const agent = agentSessions(workspace.agentProvider);
    endAgent = agent.endAll;
    const runtime = createCodingAgentRuntime({
      sandboxProvider: agent.provider,
      model: makeModel(instance),
      maxSteps,
    });
    const run = runtime.run({ task: taskFor(instance), abortSignal });
    for await (const event of run) {
      const line = formatAgentEvent(event);
      if (line !== undefined) details.agentLog.push(line);
    }
    const result: AgentResult = await run.result;
    // Nothing the agent started (a job rewriting the tests, say) runs on through grading.
    await agent.endAll();
    report.agent = {
      stopReason: result.stopReason,
      steps: result.steps,
      toolCalls: result.toolCalls,
      totalTokens: result.usage.totalTokens,
    };
    details.changedFiles = await changedFiles(workspace.client, abortSignal);

    const applied = await createApplyDiffTool(workspace.client).execute(
      { path: ".", diff: instance.test_patch },
      { abortSignal },
    );
    if (applied.conflicts.length > 0) {
      throw new Error(`the test patch did not apply: ${applied.conflicts.join("; ")}`);
    }
    const tests = await createRunTestsTool(workspace.client).execute(
      { command: `${workspace.testPrelude}${command}`, timeout: TEST_TIMEOUT_MS },
      { abortSignal },
    );
    details.testsRan = true;
    details.testOutput = `${tests.stdout}\n${tests.stderr}`;
    const grade = gradeInstance(instance, {
      output: details.testOutput,
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
    await endAgent?.().catch(() => undefined);
    await release?.();
    report.durationMs = Date.now() - started;
  }
  return { report, details };
}
