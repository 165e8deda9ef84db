import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { createAttackFixture } from "./test-support/fixture.js";
import { gitRuleAttacks, hostGit, payload } from "./test-support/git-rule-attacks.js";
import { attackSuiteSkipReason, describeAttacks, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

describeAttacks(
  "git repositories by git's own rules through bubblewrap",
  skipReason,
  gitRuleAttacks,
  { gitWritesToo: true },
);

describe.skipIf(skipReason !== undefined)(
  `a repository a session's background job made ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("is made inert before the next host-side write, and said in the next command's result", async () => {
      const fixture = await createAttackFixture();
      const client = await createLocalSandbox({ root: fixture.root, session: true });
      try {
        const jobs = client.jobs;
        if (jobs === undefined) throw new Error("this host runs no session jobs");
        const marker = path.join(fixture.outside, "ran");
        await client.exec("true");
        // The job plants its repository after the command that started it returned.
        const job = await jobs.start(
          `sleep 0.2; git init -q vendor/job && git -C vendor/job config core.fsmonitor '${payload(marker)}' && echo made`,
        );
        expect((await jobs.output(job.jobId, { until: "made", waitMs: 20_000 })).output).toBe(
          "made\n",
        );
        await client.writeFile("notes.txt", "written\n");
        hostGit(path.join(fixture.root, "vendor", "job"), "status");
        expect(existsSync(marker)).toBe(false);
        const next = await client.exec("true");
        expect(next.sandboxNotes?.join("\n")).toContain(
          "vendor/job/.git is a git repository a sandboxed command made",
        );
      } finally {
        await client.close();
        await fixture.cleanup();
      }
    });

    it("is made inert when the session closes, with no host-side call after it", async () => {
      const fixture = await createAttackFixture();
      const client = await createLocalSandbox({ root: fixture.root, session: true });
      const marker = path.join(fixture.outside, "ran");
      try {
        const jobs = client.jobs;
        if (jobs === undefined) throw new Error("this host runs no session jobs");
        await client.exec("true");
        const job = await jobs.start(
          `sleep 0.2; git init -q vendor/late && git -C vendor/late config core.fsmonitor '${payload(marker)}' && echo made; sleep 300`,
        );
        expect((await jobs.output(job.jobId, { until: "made", waitMs: 20_000 })).output).toBe(
          "made\n",
        );
        await client.close();
        hostGit(path.join(fixture.root, "vendor", "late"), "status");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
        await fixture.cleanup();
      }
    });
  },
);
