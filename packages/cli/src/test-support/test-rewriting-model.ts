// A model that fixes nothing and cheats instead: a background job that waits for the test file the
// test patch adds and rewrites it into one whose test passes, for as long as the job lives. A
// harness that lets the agent's processes run on through grading reports it resolved.
import { createScriptedModel, type ModelAdapter } from "@pleach/coding-agent/runtime";
import { shellQuote } from "@pleach/coding-agent/tools";
import { expect } from "vitest";
import type { EvalInstance } from "../eval/instances.js";
import { evaluateInstance } from "../eval/run-instance.js";
import type { WorkspaceOptions } from "../eval/workspaces.js";

/** Marks what the job writes in place of the test file: the test, passing whatever the code. */
const MARK = "rewritten by the agent's job";

/**
 * The cheating model for a test file `file` (relative to the repository) whose test `name` the
 * patch adds, run by `node --test`. Its job also keeps `job-alive` in the repository, so that a
 * test can tell that it ran during the agent's turn.
 */
function testRewritingModel({ file, name }: { file: string; name: string }): ModelAdapter {
  const content = `import { test } from "node:test";\n// ${MARK}\ntest(${JSON.stringify(name)}, () => {});\n`;
  const job = [
    "touch job-alive",
    "while :; do",
    `  if [ -f ${shellQuote(file)} ] && ! grep -q ${shellQuote(MARK)} ${shellQuote(file)}; then`,
    `    printf %s ${shellQuote(content)} > ${shellQuote(file)}`,
    "  fi",
    "  sleep 0.01",
    "done",
  ].join("\n");
  return createScriptedModel({
    name: "rewriting",
    steps: [
      { toolCalls: [{ name: "bash", input: { command: job, background: true, yieldMs: 200 } }] },
      { text: "I changed nothing; my job keeps the tests green." },
    ],
  });
}

/**
 * Evaluate the mini dataset's clamp-upper-bound instance of `instances` with the cheating model,
 * in the workspace `where` says (a local clone or the instance's image), and check that its job
 * ran during the agent's turn but not through grading: the instance stays unresolved.
 */
export async function expectRewritingJobUnresolved(
  instances: readonly EvalInstance[],
  where: Pick<WorkspaceOptions, "image" | "cwd">,
): Promise<void> {
  const instance = instances.find(({ instance_id }) => instance_id.endsWith("clamp-upper-bound"));
  if (instance === undefined) throw new Error("the mini dataset has no clamp-upper-bound");
  const { report, details } = await evaluateInstance({
    instance,
    makeModel: () =>
      testRewritingModel({
        file: "test/clamp-upper.test.js",
        name: "clamp lowers values above the range",
      }),
    maxSteps: 4,
    testCommand: undefined,
    abortSignal: new AbortController().signal,
    mode: "workspace-write",
    network: false,
    reads: { hideReads: [], allowReads: [] },
    ...where,
  });
  expect(details.changedFiles).toContain("job-alive");
  expect(details.testOutput).not.toContain(MARK);
  expect(report).toMatchObject({
    status: "unresolved",
    resolved: false,
    FAIL_TO_PASS: { failed: ["clamp lowers values above the range"] },
  });
}
