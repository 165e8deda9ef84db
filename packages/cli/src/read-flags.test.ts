import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { probeSandboxBackend } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { parseReadFlags } from "./read-flags.js";
import { runCli } from "./test-support/run-cli.js";

const probe = await probeSandboxBackend({ backend: "bubblewrap" });

describe("--hide-read and --allow-read", () => {
  it("resolve against the current folder, and ~ against the home; a preset stays as it is", () => {
    expect(
      parseReadFlags(
        {
          "hide-read": ["keys", "/srv/vault", "**/.env", "@secrets"],
          "allow-read": ["~/.npmrc", "~"],
        },
        { cwd: "/work" },
      ),
    ).toEqual({
      hideReads: ["/work/keys", "/srv/vault", "/work/**/.env", "@secrets"],
      allowReads: [path.join(os.homedir(), ".npmrc"), os.homedir()],
    });
  });

  it("--no-caches turns the kept caches off", () => {
    expect(parseReadFlags({ "no-caches": true }, { cwd: "/work" })).toEqual({
      hideReads: [],
      allowReads: [],
      caches: false,
    });
  });

  it.skipIf(!probe.available)(
    "`pleach call bash` gets kept caches, none with --no-caches",
    async () => {
      const root = await useTempDir();
      const cacheOf = async (...flags: string[]) => {
        const result = await runCli(
          [
            "call",
            "bash",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's expansion, not a template.
            JSON.stringify({ command: "echo ${GOCACHE-none}" }),
            "--workspace",
            root,
            ...flags,
          ],
          { cwd: root },
        );
        expect(result.code).toBe(0);
        return JSON.parse(result.stdout).output as string;
      };
      expect(await cacheOf()).toMatch(/\/pleach\/caches\/[0-9a-f]{16}\/go-build\n$/);
      expect(await cacheOf("--no-caches")).toBe("none\n");
    },
  );

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

  it.skipIf(!probe.available)(
    "a glob and the secrets preset hide the files they match from `call bash` and `call read_file`",
    async () => {
      const root = await useTempDir();
      await mkdir(path.join(root, "app"));
      await writeFile(path.join(root, "app/.env"), "SECRET\n");
      await writeFile(path.join(root, "app/.env.example"), "EXAMPLE\n");
      const call = (tool: string, input: object, flags: string[]) =>
        runCli(["call", tool, JSON.stringify(input), "--workspace", root, ...flags], {
          cwd: root,
        });
      for (const flags of [
        ["--hide-read", "**/.env"],
        ["--hide-read", "@secrets"],
      ]) {
        const bash = await call("bash", { command: "cat app/.env" }, [...flags, "--text"]);
        expect(bash.stdout).toContain("app/.env: Permission denied");
        expect(bash.stdout).toContain("[sandbox: reading app/.env was refused: ");
        const read = await call("read_file", { path: "app/.env" }, flags);
        expect(read.code).toBe(1);
        expect(JSON.parse(read.stdout).error.code).toBe("HIDDEN_PATH");
        const example = await call("read_file", { path: "app/.env.example" }, [...flags, "--text"]);
        expect(example.stdout).toContain("EXAMPLE");
      }
      // A glob that matches nothing hides nothing and is no error.
      const none = await call("read_file", { path: "app/.env" }, [
        "--hide-read",
        "**/*.pem",
        "--text",
      ]);
      expect(none.stdout).toContain("SECRET");
    },
  );
});
