import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { useTempDir } from "@pleach/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import { KEPT_OUTPUT_FOLDER } from "../session/kept-path.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { runInSession } from "./session-run.js";
import { SessionSandbox } from "./session-sandbox.js";
import { sessionServerSupported } from "./session-server.js";

const wrapper = createCommandWrapper();
afterAll(() => wrapper.close?.());
const skipReason =
  wrapper.backend !== "bubblewrap"
    ? "needs bubblewrap"
    : sessionServerSupported()
      ? undefined
      : "no root-owned /usr/bin/perl";

describe.skipIf(skipReason !== undefined)(
  `the kept-output folder of a session sandbox${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    it("is mounted in the sandbox's own /run, makes nothing on the host, and outlives a clean of /run", async () => {
      const root = await useTempDir();
      const invocation = await wrapper.invocation({
        command: "true",
        root,
        cwd: root,
        mode: "workspace-write",
        env: {},
        network: false,
        session: true,
      });
      await invocation.release?.();
      if (invocation.kind !== "session") throw new Error("no session sandbox for the command");
      // As a warm sandbox cleans (a session never cleans today): /run among the private folders.
      const sandbox = new SessionSandbox(
        {
          ...invocation.spec,
          kept: { path: KEPT_OUTPUT_FOLDER, sizeBytes: 1024 * 1024 },
          cleanFolders: ["/tmp", "/run"],
        },
        () => {},
      );
      try {
        expect(await sandbox.ready).toBe(true);
        expect(sandbox.keptFolder).toBe(KEPT_OUTPUT_FOLDER);
        const run = (command: string, keep?: string) =>
          runInSession(
            sandbox,
            { cwd: root, command, env: { PATH: "/usr/bin:/bin" } },
            {
              timeoutMs: 10_000,
              maxOutputBytes: 100_000,
              ...(keep === undefined ? {} : { keep: { name: keep, maxBytes: 100_000 } }),
            },
          );
        const kept = await run("seq 1 1000", "cmd-1.log");
        expect(kept?.kept).toBe(true);
        expect((await run("echo left > /run/stray; ls -A /run/pleach-output"))?.result.stdout).toBe(
          "cmd-1.log\n",
        );
        expect(await sandbox.clean()).toBe(true);
        const after = await run(
          "ls -A /run; wc -l < /run/pleach-output/cmd-1.log; ls -A; mount | grep -c ' /run/pleach-output '",
        );
        const lines = after?.result.stdout.split("\n") ?? [];
        // The stray file went with the clean, the kept folder and its output did not.
        expect(lines).not.toContain("stray");
        expect(lines).toContain("pleach-output");
        expect(lines).toContain("1000");
        expect(lines.at(-2)).toBe("1");
        // Nothing of it in the workspace or in the host's /run.
        expect((await readdir(root)).filter((name) => name.includes("pleach-output"))).toEqual([]);
        expect(existsSync(KEPT_OUTPUT_FOLDER)).toBe(false);
      } finally {
        await sandbox.destroy();
      }
      expect((await readdir(root)).filter((name) => name.includes("pleach-output"))).toEqual([]);
    });
  },
);
