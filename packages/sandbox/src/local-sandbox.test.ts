import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describeSandboxClientContract, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "./local-sandbox.js";
import { createCommandWrapper } from "./os/index.js";

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
