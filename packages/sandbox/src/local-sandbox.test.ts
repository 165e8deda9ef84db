import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxMode } from "@pleach/core/sandbox";
import { describeSandboxClientContract, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "./local-sandbox.js";
import { MAX_COMMAND_BYTES } from "./os/command-text.js";
import { createCommandWrapper } from "./os/create-command-wrapper.js";

describeSandboxClientContract(
  "local, danger-full-access",
  (root) => createLocalSandbox({ root, mode: "danger-full-access" }),
  { exec: true, sharedFileSystem: true },
);

const probe = await createLocalSandbox({ root: process.cwd(), mode: "workspace-write" });
describeSandboxClientContract(
  `local, workspace-write (${probe.backend})`,
  (root) => createLocalSandbox({ root, mode: "workspace-write" }),
  { exec: probe.backend !== "none", sharedFileSystem: true },
);

describeSandboxClientContract(
  "local, workspace-write without an OS sandbox",
  (root) =>
    createLocalSandbox({
      root,
      mode: "workspace-write",
      commandWrapper: createCommandWrapper({ backend: "none" }),
    }),
  { exec: false, sharedFileSystem: true },
);

describe("createLocalSandbox", () => {
  it("refuses every write in read-only mode", async () => {
    const root = await useTempDir();
    await writeFile(path.join(root, "kept.txt"), "kept");
    const client = await createLocalSandbox({ root, mode: "read-only" });
    await expect(client.writeFile("kept.txt", "changed")).rejects.toMatchObject({
      code: "READ_ONLY",
    });
    await expect(client.writeFile("new.txt", "x")).rejects.toMatchObject({ code: "READ_ONLY" });
    expect(await client.readFile("kept.txt")).toBe("kept");
    await expect(stat(path.join(root, "new.txt"))).rejects.toThrow();
  });

  it("refuses writes to git metadata and host-run files outside danger-full-access", async () => {
    const root = await useTempDir();
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    for (const protectedPath of [
      ".git/hooks/pre-commit",
      "sub/.git/config",
      ".envrc",
      ".mcp.json",
      ".vscode/tasks.json",
      ".claude/settings.json",
    ]) {
      await expect(client.writeFile(protectedPath, "x")).rejects.toMatchObject({
        code: "PROTECTED_PATH",
      });
    }
    // Deeper down the same names are ordinary files (only .git is protected at any depth).
    await client.writeFile("docs/.envrc", "x");
    const full = await createLocalSandbox({ root, mode: "danger-full-access" });
    await full.writeFile(".envrc", "export X=1\n");
    expect(await readFile(path.join(root, ".envrc"), "utf8")).toBe("export X=1\n");
  });

  it("leaves no temporary file behind, also when the write fails", async () => {
    const root = await useTempDir();
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    await client.writeFile("a.txt", "one");
    await mkdir(path.join(root, "dir"));
    await expect(client.writeFile("dir", "x")).rejects.toMatchObject({ code: "NOT_A_FILE" });
    const { readdir } = await import("node:fs/promises");
    expect((await readdir(root)).sort()).toEqual(["a.txt", "dir"]);
  });

  it("rejects a root that does not exist or is a file", async () => {
    const root = await useTempDir();
    await writeFile(path.join(root, "file"), "x");
    await expect(createLocalSandbox({ root: path.join(root, "missing") })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(createLocalSandbox({ root: path.join(root, "file") })).rejects.toMatchObject({
      code: "NOT_A_DIRECTORY",
    });
  });

  it("refuses files larger than maxFileBytes", async () => {
    const root = await useTempDir();
    await writeFile(path.join(root, "big"), Buffer.alloc(2048));
    const client = await createLocalSandbox({ root, maxFileBytes: 1024 });
    await expect(client.readFile("big")).rejects.toMatchObject({ code: "TOO_LARGE" });
  });
});

describe("commands of any length up to MAX_COMMAND_BYTES", () => {
  const confined: SandboxMode[] = probe.backend === "none" ? [] : ["workspace-write", "read-only"];
  const setups = [
    ...confined.map((mode) => ({ name: `${mode}, one-off sandboxes`, mode, warm: false })),
    ...confined.map((mode) => ({ name: `${mode}, warm sandboxes`, mode, warm: true })),
    { name: "danger-full-access", mode: "danger-full-access" as SandboxMode, warm: false },
  ];

  it.each(setups)(
    "runs a 1 MiB command and refuses a longer one ($name)",
    async ({ mode, warm }) => {
      const root = await useTempDir();
      const wrapper = createCommandWrapper({ warmSandbox: warm });
      const client = await createLocalSandbox({ root, mode, commandWrapper: wrapper });
      try {
        // Short commands before and after: a warm sandbox in use runs the long one one-off.
        expect((await client.exec("echo short")).stdout).toBe("short\n");
        const tail = `\necho "ok $0 $# $(cat)"`;
        const command = `: ${"x".repeat(MAX_COMMAND_BYTES - 2 - tail.length)}${tail}`;
        expect(Buffer.byteLength(command)).toBe(MAX_COMMAND_BYTES);
        const result = await client.exec(command, { stdin: "in" });
        expect(result).toMatchObject({ exitCode: 0, stdout: "ok /bin/bash 0 in\n" });
        expect((await client.exec(command)).stdout).toBe("ok /bin/bash 0 \n");
        await expect(client.exec(`${command}x`)).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: expect.stringContaining("1048576 bytes"),
        });
        expect((await client.exec("echo short")).stdout).toBe("short\n");
      } finally {
        await wrapper.close?.();
      }
    },
  );
});

describe("non-interactive commands", () => {
  const modes = [
    ...(probe.backend === "none" ? [] : (["workspace-write"] as const)),
    "danger-full-access",
  ] as const;

  it.each(modes)(
    "git commit without -m takes no editor, git log pages nothing, the caller's env wins (%s)",
    async (mode) => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, mode, defaultTimeoutMs: 20_000 });
      // One call: a repository a command made is read-only for the next (a folder git takes for a
      // git directory is protected whatever its name) and made inert when the call ends.
      const git =
        "GIT_DIR=store GIT_WORK_TREE=. git -c user.name=t -c user.email=t@example.com -c core.pager=less -c core.editor=vi";
      await client.writeFile("a.txt", "a\n");
      // An editor would wait on the terminal until the time limit; GIT_EDITOR=true leaves the message empty.
      const run = await client.exec(
        [
          `${git} init -q && ${git} add a.txt && ${git} commit -qm one`,
          "echo b > a.txt",
          `${git} commit -a`,
          `${git} log --format=%s`,
        ].join("\n"),
      );
      expect(run.timedOut).toBe(false);
      expect(run.stderr).toContain("empty commit message");
      expect(run).toMatchObject({ exitCode: 0, stdout: "one\n" });
      const variables = await client.exec(
        'echo "$GIT_EDITOR $GIT_PAGER $PAGER $GIT_TERMINAL_PROMPT $npm_config_yes $DEBIAN_FRONTEND"',
        { env: { PAGER: "more" } },
      );
      expect(variables.stdout).toBe("true cat more 0 true noninteractive\n");
    },
  );
});
