// Grading after the agent: a model that fixes nothing but leaves a background job rewriting the
// test file the test patch adds is reported unresolved, since every process of the agent's
// session ends before the test patch is applied. (The same over `--image`: eval-image.test.ts.)
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { expect, it } from "vitest";
import { testRewritingModel } from "../test-support/test-rewriting-model.js";
import { readInstances } from "./instances.js";
import { buildMiniDataset, sandboxVisibleTempParent } from "./mini-dataset.js";
import { evaluateInstance } from "./run-instance.js";

it("ends the agent's background jobs before grading: a job rewriting the tests resolves nothing", async () => {
  const directory = await useTempDir({
    prefix: "pleach-eval-job-",
    parent: await sandboxVisibleTempParent(),
  });
  const instances = await readInstances(await buildMiniDataset({ directory }));
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
    cwd: path.dirname(directory),
  });
  // The job ran during the agent's turn, and not after it: the test patch's test ran as written.
  expect(details.changedFiles).toContain("job-alive");
  expect(details.testOutput).not.toContain("rewritten by the agent's job");
  expect(report).toMatchObject({
    status: "unresolved",
    resolved: false,
    FAIL_TO_PASS: { failed: ["clamp lowers values above the range"] },
  });
}, 120_000);
