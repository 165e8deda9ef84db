import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox, probeSandboxBackend } from "@pleach/sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findPwned, git, HOSTILE_INPUTS } from "../../test-support/hostile-inputs.js";
import { createSearchFilesTool } from "../search-files/tool.js";
import { createListFilesTool } from "./tool.js";

let root: string;

beforeEach(async () => {
  root = await useTempDir("pleach-list-");
});
afterEach(async () => {
  expect(await findPwned(root)).toEqual([]);
});

async function plant(files: Record<string, string>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
}

async function listTool() {
  return createListFilesTool(await createLocalSandbox({ root, mode: "danger-full-access" }));
}

describe("list_files", () => {
  it("lists a folder's immediate children by default, with sizes for files", async () => {
    git(root, "init", "-q");
    await plant({ "b.txt": "hello", "a/inner.txt": "x", ".env.example": "K=V\n" });
    const tool = await listTool();
    const entries = await tool.execute({ dir: "." });
    expect(entries).toEqual([
      { path: ".env.example", kind: "file", size: 4 },
      { path: "a", kind: "dir" },
      { path: "b.txt", kind: "file", size: 5 },
    ]);
    expect(tool.toModelOutput(entries).output).toMatchInlineSnapshot(`
      ".env.example  (4 bytes)
      a/
      b.txt  (5 bytes)"
    `);
    expect(await tool.execute({ dir: "" })).toEqual(entries);
  });

  it("lists everything below a folder with recursive, as workspace-relative paths", async () => {
    await plant({ "src/a.ts": "a", "src/deep/b.ts": "bb", "other/c.ts": "c" });
    const tool = await listTool();
    expect(await tool.execute({ dir: "src", recursive: true })).toEqual([
      { path: "src/a.ts", kind: "file", size: 1 },
      { path: "src/deep", kind: "dir" },
      { path: "src/deep/b.ts", kind: "file", size: 2 },
    ]);
    expect(await tool.execute({ dir: "./src/deep/" })).toEqual([
      { path: "src/deep/b.ts", kind: "file", size: 2 },
    ]);
  });

  it("matches a name glob at any depth, and a glob with a slash against the path below dir", async () => {
    await plant({ "a.ts": "", "b.js": "", "lib/c.ts": "", "lib/d.md": "", "lib/x/e.ts": "" });
    const tool = await listTool();
    for (const includeIgnored of [false, true]) {
      const paths = async (input: { dir: string; glob: string; recursive?: boolean }) =>
        (await tool.execute({ recursive: true, includeIgnored, ...input })).map(
          (entry) => entry.path,
        );
      expect(await paths({ dir: ".", glob: "*.ts" })).toEqual(["a.ts", "lib/c.ts", "lib/x/e.ts"]);
      expect(await paths({ dir: ".", glob: "lib/*.ts" })).toEqual(["lib/c.ts"]);
      expect(await paths({ dir: ".", glob: "/lib/*.ts" })).toEqual(["lib/c.ts"]);
      expect(await paths({ dir: ".", glob: "lib/**/*.ts" })).toEqual(["lib/c.ts", "lib/x/e.ts"]);
      expect(await paths({ dir: ".", glob: "**/*.ts" })).toEqual([
        "a.ts",
        "lib/c.ts",
        "lib/x/e.ts",
      ]);
      expect(await paths({ dir: "lib", glob: "x/*.ts" })).toEqual(["lib/x/e.ts"]);
      expect(await paths({ dir: ".", glob: "**/*.ts", recursive: false })).toEqual(["a.ts"]);
      expect(await paths({ dir: ".", glob: "nothing/**/*.ts" })).toEqual([]);
    }
    // find matches folders by name too; ripgrep lists files only.
    expect(
      (await tool.execute({ dir: ".", glob: "l*", includeIgnored: true })).map(
        (entry) => entry.path,
      ),
    ).toEqual(["lib"]);
    expect(await tool.execute({ dir: ".", glob: "l*" })).toEqual([]);
    // find cannot match a glob in a folder part; ripgrep can.
    expect(
      (await tool.execute({ dir: ".", recursive: true, glob: "*/x/*.ts" })).map(
        (entry) => entry.path,
      ),
    ).toEqual(["lib/x/e.ts"]);
    await expect(
      tool.execute({ dir: ".", recursive: true, glob: "*/x/*.ts", includeIgnored: true }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("find") });
  });

  it("never lists or enters .git, also through a symlink", async () => {
    git(root, "init", "-q");
    await plant({ "src/a.ts": "", "vendor/x/.git": "gitdir: elsewhere\n" });
    const tool = await listTool();
    const entries = await tool.execute({ dir: ".", recursive: true, includeIgnored: true });
    expect(entries.map((entry) => entry.path)).toEqual(["src", "src/a.ts", "vendor", "vendor/x"]);
    // vendor/x holds no file but its .git: a folder of no listed file.
    const kept = await tool.execute({ dir: ".", recursive: true });
    expect(kept.map((entry) => entry.path)).toEqual(["src", "src/a.ts"]);
    await expect(tool.execute({ dir: ".git" })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(tool.execute({ dir: "src/../.git/refs" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await symlink(".git", path.join(root, "sneaky"));
    await expect(tool.execute({ dir: "sneaky" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });

  it("drops symlinks, pipes and devices", async () => {
    await plant({ "real.txt": "r", "dir/x": "" });
    await symlink("real.txt", path.join(root, "link.txt"));
    await symlink("dir", path.join(root, "link-dir"));
    await symlink("missing", path.join(root, "dangling"));
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    try {
      execFileSync("mknod", [path.join(root, "null-device"), "c", "1", "3"], { stdio: "ignore" });
    } catch {
      // Creating a device needs root; the pipe above still covers "not a file or folder".
    }
    const tool = await listTool();
    expect(await tool.execute({ dir: ".", recursive: true })).toEqual([
      { path: "dir", kind: "dir" },
      { path: "dir/x", kind: "file", size: 0 },
      { path: "real.txt", kind: "file", size: 1 },
    ]);
  });

  it("keeps names with spaces, colons, tabs, newlines and unicode intact", async () => {
    const names = ["with space.txt", "a:b.txt", "tab\there", "new\nline", "café ☕", "-rf"];
    await plant(Object.fromEntries(names.map((name) => [`d/${name}`, "12"])));
    const tool = await listTool();
    const entries = await tool.execute({ dir: "d" });
    expect(entries).toEqual(
      names
        .map((name) => `d/${name}`)
        .sort()
        .map((name) => ({ path: name, kind: "file", size: 2 })),
    );
    expect(tool.toModelOutput(entries).output).toMatchInlineSnapshot(`
      "d/-rf  (2 bytes)
      d/a:b.txt  (2 bytes)
      d/café ☕  (2 bytes)
      "d/new\\nline"  (2 bytes)
      "d/tab\\there"  (2 bytes)
      d/with space.txt  (2 bytes)"
    `);
  });

  it("lists a folder whose name find -printf would read as directives or escapes", async () => {
    const folder = "100% \\n %p \\0";
    await plant({ [`${folder}/sub/a.txt`]: "abc" });
    const tool = await listTool();
    expect(await tool.execute({ dir: folder, recursive: true })).toEqual([
      { path: `${folder}/sub`, kind: "dir" },
      { path: `${folder}/sub/a.txt`, kind: "file", size: 3 },
    ]);
    expect(await tool.execute({ dir: `${folder}/sub` })).toEqual([
      { path: `${folder}/sub/a.txt`, kind: "file", size: 3 },
    ]);
  });

  it("sorts by the bytes of the names, listing one folder or a tree", async () => {
    // U+FF21 is three UTF-8 bytes starting 0xEF, U+1F600 four starting 0xF0, so byte order puts
    // the fullwidth letter first; JavaScript's UTF-16 order would put the emoji first.
    const names = ["b", "B", "a-b", "a.b", "_x", "\u{1F600}", "\uFF21", "é"];
    await plant(Object.fromEntries(names.map((name) => [`d/${name}`, ""])));
    const tool = await listTool();
    const expected = ["B", "_x", "a-b", "a.b", "b", "é", "\uFF21", "\u{1F600}"].map(
      (name) => `d/${name}`,
    );
    expect((await tool.execute({ dir: "d" })).map((entry) => entry.path)).toEqual(expected);
    expect((await tool.execute({ dir: "d", recursive: true })).map((entry) => entry.path)).toEqual(
      expected,
    );
  });

  it("caps the listing at maxEntries and marks the cut", async () => {
    await plant(Object.fromEntries([1, 2, 3, 4, 5].map((index) => [`f${index}`, ""])));
    const tool = await listTool();
    const capped = await tool.execute({ dir: ".", maxEntries: 3 });
    expect(capped).toHaveLength(3);
    expect(capped[2]?.truncatedAfter).toBe(true);
    expect(tool.toModelOutput(capped).output).toMatch(
      /\n\[listing capped at 3 entries; narrow dir or glob, or raise maxEntries\]$/,
    );
    const exact = await tool.execute({ dir: ".", maxEntries: 5 });
    expect(exact.map((entry) => entry.path)).toEqual(["f1", "f2", "f3", "f4", "f5"]);
    expect(exact.some((entry) => entry.truncatedAfter)).toBe(false);
  });

  it("cuts a long recursive listing the same way call after call, sorted", async () => {
    const files: Record<string, string> = {};
    for (let index = 0; index < 60; index++) files[`d${index % 5}/e${index % 3}/f${index}`] = "";
    await plant(files);
    const tool = await listTool();
    const everything = await tool.execute({ dir: ".", recursive: true });
    expect(everything).toHaveLength(5 + 15 + 60);
    const cut = await tool.execute({ dir: ".", recursive: true, maxEntries: 25 });
    expect(cut).toHaveLength(25);
    expect(cut[24]?.truncatedAfter).toBe(true);
    const paths = cut.map((entry) => entry.path);
    expect(paths).toEqual([...paths].sort());
    const listed = new Set(everything.map((entry) => entry.path));
    expect(paths.every((entryPath) => listed.has(entryPath))).toBe(true);
    for (let call = 0; call < 3; call++) {
      expect(await tool.execute({ dir: ".", recursive: true, maxEntries: 25 })).toEqual(cut);
    }
  });

  it("says so when a folder is empty", async () => {
    await mkdir(path.join(root, "empty"));
    const tool = await listTool();
    const entries = await tool.execute({ dir: "empty", recursive: true });
    expect(entries).toEqual([]);
    expect(tool.toModelOutput(entries).output).toMatchInlineSnapshot(
      `"No entries. (Nothing here matches the glob, if one was given. Files left out by .gitignore or .ignore are listed with includeIgnored: true; symlinks, devices and .git never are.)"`,
    );
  });

  it("runs no hostile glob or dir", async () => {
    await plant({ "a.txt": "" });
    const tool = await listTool();
    for (const hostile of HOSTILE_INPUTS) {
      expect(await tool.execute({ dir: ".", glob: hostile, recursive: true })).toEqual([]);
      await expect(tool.execute({ dir: hostile })).rejects.toMatchObject({ name: "ToolError" });
    }
    await plant({ "-rf/x": "", "$(touch pwned)/y": "" });
    expect(await tool.execute({ dir: "-rf" })).toEqual([{ path: "-rf/x", kind: "file", size: 0 }]);
    expect(await tool.execute({ dir: "$(touch pwned)" })).toEqual([
      { path: "$(touch pwned)/y", kind: "file", size: 0 },
    ]);
  });

  it("takes an absolute path inside the workspace, as read_file does", async () => {
    await plant({ "src/a.ts": "a", "src/deep/b.ts": "bb" });
    const tool = await listTool();
    const relative = await tool.execute({ dir: "src", recursive: true });
    expect(await tool.execute({ dir: path.join(root, "src"), recursive: true })).toEqual(relative);
    expect(await tool.execute({ dir: `${root}/src/deep/..//`, recursive: true })).toEqual(relative);
    expect(await tool.execute({ dir: root })).toEqual(await tool.execute({ dir: "." }));
    // A workspace given through a symlink, and an absolute path spelled through it.
    const link = path.join(await useTempDir("pleach-link-"), "workspace");
    await symlink(root, link);
    const throughLink = createListFilesTool(
      await createLocalSandbox({ root: link, mode: "danger-full-access" }),
    );
    expect(await throughLink.execute({ dir: path.join(link, "src"), recursive: true })).toEqual(
      relative,
    );
    expect(await throughLink.execute({ dir: path.join(root, "src"), recursive: true })).toEqual(
      relative,
    );
  });

  it("refuses folders outside the workspace, absolute or relative, files and missing folders", async () => {
    await plant({ "a.txt": "" });
    const tool = await listTool();
    await expect(tool.execute({ dir: ".." })).rejects.toMatchObject({ code: "PATH_ESCAPE" });
    await expect(tool.execute({ dir: "a/../../x" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ dir: "/" })).rejects.toMatchObject({ code: "PATH_ESCAPE" });
    await expect(tool.execute({ dir: path.dirname(root) })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ dir: `${root}/../x` })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ dir: "a.txt" })).rejects.toMatchObject({
      code: "NOT_A_DIRECTORY",
    });
    await expect(tool.execute({ dir: "missing" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const outside = await useTempDir("pleach-outside-");
    await symlink(outside, path.join(root, "out"));
    await expect(tool.execute({ dir: "out" })).rejects.toMatchObject({ code: "PATH_ESCAPE" });
  });

  it("in read-only mode, lists under the OS sandbox or refuses without one", async () => {
    await plant({ "a.txt": "" });
    const client = await createLocalSandbox({ root, mode: "read-only" });
    const listing = createListFilesTool(client).execute({ dir: "." });
    if (client.backend === "none") {
      await expect(listing).rejects.toMatchObject({ code: "NO_SANDBOX" });
    } else {
      expect(await listing).toEqual([{ path: "a.txt", kind: "file", size: 0 }]);
    }
  });
});

/** Why the sandboxed listings cannot run here, or `undefined` when they can. */
const noBubblewrap =
  process.platform !== "linux"
    ? "bubblewrap runs on Linux only"
    : await probeSandboxBackend({ backend: "bubblewrap" }).then((probe) =>
        probe.available ? undefined : `no working bubblewrap: ${probe.reason}`,
      );

describe.skipIf(noBubblewrap !== undefined)(
  `list_files while a workspace-write bubblewrap sandbox runs a command${noBubblewrap === undefined ? "" : ` (skipped: ${noBubblewrap})`}`,
  () => {
    it("lists the workspace as it is while a command runs, folders of protected names included", async () => {
      // The user's own: an empty read-only folder and a folder with a file, both protected names.
      await plant({ "src/a.ts": "needle\n", ".vscode/settings.json": "{}\n" });
      await mkdir(path.join(root, ".idea"), { mode: 0o555 });
      const client = await createLocalSandbox({ root, mode: "workspace-write" });
      const list = createListFilesTool(client);
      const search = createSearchFilesTool(client);
      // A long command runs while the tools do: its sandbox puts nothing in the workspace.
      const stop = new AbortController();
      const running = client
        .exec("touch started; sleep 30", { abortSignal: stop.signal })
        .catch(() => undefined);
      for (let waited = 0; !existsSync(path.join(root, "started")); waited += 10) {
        if (waited > 10_000) throw new Error("the command did not start");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await rm(path.join(root, "started"));
      try {
        const own = [
          { path: ".idea", kind: "dir" },
          { path: ".vscode", kind: "dir" },
          { path: "src", kind: "dir" },
        ];
        const all = { includeIgnored: true };
        expect(await list.execute({ dir: ".", ...all })).toEqual(own);
        expect(await list.execute({ dir: ".", recursive: true, ...all })).toEqual([
          ...own.slice(0, 2),
          { path: ".vscode/settings.json", kind: "file", size: 3 },
          own[2],
          { path: "src/a.ts", kind: "file", size: 7 },
        ]);
        // The cut counts only what is listed: exactly three entries, not cut.
        expect(await list.execute({ dir: ".", maxEntries: 3, ...all })).toEqual(own);
        expect(await list.execute({ dir: ".", glob: ".*", recursive: true, ...all })).toEqual(
          own.slice(0, 2),
        );
        // ripgrep lists files, and the empty .idea holds none.
        expect(await list.execute({ dir: "." })).toEqual(own.slice(1));
        expect(await list.execute({ dir: ".", recursive: true })).toEqual([
          own[1],
          { path: ".vscode/settings.json", kind: "file", size: 3 },
          own[2],
          { path: "src/a.ts", kind: "file", size: 7 },
        ]);
        // Nothing stands at a missing protected path.
        await expect(list.execute({ dir: ".mcp.json" })).rejects.toMatchObject({
          code: "NOT_FOUND",
        });
        expect(await list.execute({ dir: ".idea" })).toEqual([]);
        const matches = await search.execute({ pattern: "." });
        expect(matches.map((match) => match.path).sort()).toEqual([
          ".vscode/settings.json",
          "src/a.ts",
        ]);
      } finally {
        stop.abort();
        await running;
      }
    });
  },
);
