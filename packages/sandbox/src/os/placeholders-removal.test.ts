import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { forceRemove, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

/** Whether a file (not our placeholder folder) stands at `target` on the host. */
function fileAt(target: string): boolean {
  return lstatSync(target, { throwIfNoEntry: false })?.isFile() === true;
}

/** The host user's `git clean -fd`, then an `rm -rf` of every placeholder left, as a user might. */
function cleanAsTheUser(root: string): void {
  spawnSync("git", ["clean", "-fdq"], { cwd: root, stdio: "ignore" });
  for (const name of readdirSync(root)) {
    if (name === ".git") continue;
    spawnSync("rm", ["-rf", "--", path.join(root, name)], { stdio: "ignore" });
  }
}

async function startSession(root: string): Promise<LocalSandbox> {
  execFileSync("git", ["init", "-q", root]);
  const client = await createLocalSandbox({ root, session: true });
  expect((await client.exec("true")).exitCode).toBe(0);
  return client;
}

describe.skipIf(skipReason !== undefined)(
  `placeholders under a session's jobs ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("keeps a job from writing .envrc and .vscode/tasks.json when the host user removes the placeholders", async () => {
      const root = await useTempDir();
      const client = await startSession(root);
      try {
        const job = await client.jobs?.start(
          "echo up; while :; do echo pwned > .envrc; mkdir -p .vscode; echo '{}' > .vscode/tasks.json; done 2>/dev/null",
        );
        await client.jobs?.output(job?.jobId ?? "", { waitMs: 10_000, until: "up" });
        cleanAsTheUser(root);
        // The job loops all along: a write that got through shows within this bounded look.
        for (let look = 0; look < 60; look += 1) {
          expect(fileAt(path.join(root, ".envrc"))).toBe(false);
          expect(fileAt(path.join(root, ".vscode", "tasks.json"))).toBe(false);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const next = await client.exec("echo x > .envrc");
        expect(next.exitCode).not.toBe(0);
        expect(fileAt(path.join(root, ".envrc"))).toBe(false);
      } finally {
        await client.close();
      }
      expect(fileAt(path.join(root, ".envrc"))).toBe(false);
    });

    it("stops the jobs, and says so, when a placeholder under them is removed past its guards", async () => {
      const root = await useTempDir();
      const client = await startSession(root);
      try {
        const job = await client.jobs?.start("echo up; sleep 300");
        await client.jobs?.output(job?.jobId ?? "", { waitMs: 10_000, until: "up" });
        await forceRemove(path.join(root, ".envrc"));
        // Stopped as the placeholder goes, not only at the next command.
        await expect
          .poll(async () => (await client.jobs?.list())?.[0]?.state, { timeout: 5_000 })
          .not.toBe("running");
        const next = await client.exec("echo x > .envrc");
        expect(next.exitCode).not.toBe(0);
        expect(next.sandboxNotes?.join("\n")).toContain(
          "the session's background jobs and commands were stopped: .envrc was removed or replaced on the host",
        );
        expect((await client.jobs?.list())?.[0]?.state).not.toBe("running");
        expect(fileAt(path.join(root, ".envrc"))).toBe(false);
        // The session goes on, protected, and takes jobs again.
        expect((await client.jobs?.start("echo again"))?.state).toBe("running");
        expect((await client.exec("echo x > .envrc")).exitCode).not.toBe(0);
      } finally {
        await client.close();
      }
      expect(fileAt(path.join(root, ".envrc"))).toBe(false);
    });

    it("leaves the workspace removable by a plain rm once its client is closed", async () => {
      for (const session of [false, true]) {
        const root = await useTempDir();
        execFileSync("git", ["init", "-q", root]);
        const client = await createLocalSandbox({ root, session });
        expect((await client.exec("true")).exitCode).toBe(0);
        expect(lstatSync(path.join(root, ".envrc")).isDirectory()).toBe(true);
        await client.close();
        await rm(root, { recursive: true });
        expect(existsSync(root)).toBe(false);
      }
    });
  },
);
