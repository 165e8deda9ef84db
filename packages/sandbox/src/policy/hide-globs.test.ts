import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { attackSuiteSkipReason } from "../os/test-support/suite.js";
import { hideReadPaths } from "./hide-globs.js";

const skipReason = await attackSuiteSkipReason();

async function plant(root: string, files: readonly string[]): Promise<void> {
  for (const file of files) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), "SECRET=1\n");
  }
}

const ENV_FILES = [
  ".env",
  ".env.local",
  ".env.example",
  ".env.template",
  "app/.env",
  "app/.env.production",
  "app/.env.sample",
  "app/deep/er/.env",
  "node_modules/pkg/.env",
  "notes.txt",
];

describe("hideReadPaths", () => {
  it("expands a glob to what matches now, at any depth for **, and not into node_modules", async () => {
    const root = await useTempDir();
    await plant(root, ENV_FILES);
    const found = hideReadPaths([path.join(root, "**/.env")], root);
    expect(found.map((each) => path.relative(root, each.path)).sort()).toEqual([
      ".env",
      "app/.env",
      "app/deep/er/.env",
    ]);
    expect(found[0]?.why).toBe(
      `it matches ${path.join(root, "**/.env")} of hideReads (--hide-read)`,
    );
    expect(
      hideReadPaths([path.join(root, "app/*.?nv*"), path.join(root, "[a]pp/.env.[!s]*")], root)
        .map((each) => path.relative(root, each.path))
        .sort(),
    ).toEqual(["app/.env", "app/.env.production", "app/.env.production", "app/.env.sample"]);
  });

  it("takes the secrets preset: .env and .env.* files below the workspace, but examples, templates and folders", async () => {
    const root = await useTempDir();
    await plant(root, [...ENV_FILES, "py/.env/bin/python"]);
    const found = hideReadPaths(["@secrets"], root);
    expect(found.map((each) => path.relative(root, each.path)).sort()).toEqual([
      ".env",
      ".env.local",
      "app/.env",
      "app/.env.production",
      "app/deep/er/.env",
    ]);
    expect(found[0]?.why).toMatch(/^it is hidden by the secrets preset \(--hide-read @secrets: /);
  });

  it("hides nothing for a glob that matches nothing, and refuses an unknown preset", async () => {
    const root = await useTempDir();
    expect(hideReadPaths([path.join(root, "**/.env"), "@secrets"], root)).toEqual([]);
    expect(hideReadPaths([path.join(root, "no-such/*/x")], root)).toEqual([]);
    expect(() => hideReadPaths(["@secret"], root)).toThrow(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message:
          'hideReads "@secret" is no preset; the presets are @secrets. A path whose name starts with @ is written ./@secret.',
      }),
    );
  });

  it("keeps a plain path as it is, there or not, and one whose name holds a glob character", async () => {
    expect(hideReadPaths(["/srv/vault"], "/work")).toEqual([
      { path: "/srv/vault", why: "it is hidden by hideReads (--hide-read)" },
    ]);
    const root = await useTempDir();
    await plant(root, ["build[1]", "build1"]);
    expect(hideReadPaths([path.join(root, "build[1]")], root).map((each) => each.path)).toEqual([
      path.join(root, "build[1]"),
      path.join(root, "build1"),
    ]);
  });
});

describe.skipIf(skipReason !== undefined)("hideReads globs, for commands and file tools", () => {
  it("refuses a file a glob matches, made after the sandbox was, to commands and readFile alike", async () => {
    const root = await useTempDir();
    await plant(root, ["notes.txt"]);
    for (const [hideReads, session] of [
      [[path.join(root, "**/.env")], false],
      [["@secrets"], false],
      [["@secrets"], true],
    ] as const) {
      await rm(path.join(root, "app"), { recursive: true, force: true });
      const client = await createLocalSandbox({
        root,
        mode: "workspace-write",
        hideReads,
        session,
      });
      // A command before the file is there: a session's sandbox is up by then.
      expect((await client.exec("ls app 2>&1; true")).stdout).toContain("No such file");
      // Made after the sandbox: matched at each use.
      await plant(root, ["app/.env", "app/.env.example"]);
      const cat = await client.exec("cat app/.env");
      expect(cat.stderr).toContain("Permission denied");
      expect(cat.sandboxNotes?.[0]).toMatch(/^sandbox: reading app\/\.env was refused: /);
      await expect(client.readFile("app/.env")).rejects.toMatchObject({ code: "HIDDEN_PATH" });
      expect(await client.readFile("notes.txt")).toBe("SECRET=1\n");
      const example = await client.exec("cat app/.env.example");
      expect(example.stdout).toBe("SECRET=1\n");
      await client.close();
    }
  });
});
