// Grading after the agent: a model that fixes nothing but leaves a background job rewriting the
// test file the test patch adds is reported unresolved, since every process of the agent's
// session ends before the test patch is applied. (The same over `--image`: eval-image.test.ts.)
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { it } from "vitest";
import { expectRewritingJobUnresolved } from "../test-support/test-rewriting-model.js";
import { readInstances } from "./instances.js";
import { buildMiniDataset, sandboxVisibleTempParent } from "./mini-dataset.js";

it("ends the agent's background jobs before grading: a job rewriting the tests resolves nothing", async () => {
  const directory = await useTempDir({
    prefix: "pleach-eval-job-",
    parent: await sandboxVisibleTempParent(),
  });
  const instances = await readInstances(await buildMiniDataset({ directory }));
  await expectRewritingJobUnresolved(instances, { cwd: path.dirname(directory) });
}, 120_000);
