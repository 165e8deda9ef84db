import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { probeSandboxBackend } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { parseReadFlags } from "./cli-support.js";
import { runCli } from "./test-support/run-cli.js";

const probe = await probeSandboxBackend({ backend: "bubblewrap" });

describe("--hide-read and --allow-read", () => {
  it("resolve against the current folder, and ~ against the home", () => {
    expect(
      parseReadFlags(
        { "hide-read": ["keys", "/srv/vault"], "allow-read": ["~/.npmrc", "~"] },
        { cwd: "/work" },
      ),
    ).toEqual({
      hideReads: ["/work/keys", "/srv/vault"],
      allowReads: [path.join(os.homedir(), ".npmrc"), os.homedir()],
    });
  });

  it.skipIf(!probe.available)(
    "hide a file from `pleach call bash`, and give one back",
    async () => {
      // Outside /tmp: the sandbox's private /tmp would hide it anyway.
      const outside = await realpath(await mkdtemp("/var/tmp/pleach-read-flags-"));
      cleanUpAfter(outside, () => rm(outside, { recursive: true, force: true }));
      await mkdir(path.join(outside, "vault"));
      await writeFile(path.join(outside, "vault/key"), "SECRET\n");
      const root = await useTempDir();
      const key = path.join(outside, "vault/key");
      const read = async (...flags: string[]) => {
        const result = await runCli(
          [
            "call",
            "bash",
            JSON.stringify({ command: `cat '${key}' 2>/dev/null || true` }),
            "--workspace",
            root,
            "--mode",
            "read-only",
            ...flags,
          ],
          { cwd: outside },
        );
        expect(result.code).toBe(0);
        return JSON.parse(result.stdout).output as string;
      };
      expect(await read()).toBe("SECRET\n");
      expect(await read("--hide-read", "vault")).toBe("");
      expect(await read("--hide-read", "vault", "--allow-read", "vault")).toBe("SECRET\n");
    },
  );
});
