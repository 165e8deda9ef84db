import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { createApplyDiffTool } from "./tool.js";

type Tree = Record<string, string>;

async function plant(root: string, tree: Tree): Promise<void> {
  for (const [name, content] of Object.entries(tree)) {
    if (name.endsWith("/")) {
      await mkdir(path.join(root, name), { recursive: true });
      continue;
    }
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
}

/** Every file under `root` with its text; an empty folder as `name/`. */
async function snapshot(root: string, prefix = ""): Promise<Tree> {
  const tree: Tree = {};
  const entries = await readdir(path.join(root, prefix));
  if (entries.length === 0 && prefix !== "") tree[`${prefix}/`] = "";
  for (const entry of entries) {
    const name = prefix === "" ? entry : `${prefix}/${entry}`;
    if ((await stat(path.join(root, name))).isDirectory()) {
      Object.assign(tree, await snapshot(root, name));
    } else {
      tree[name] = await readFile(path.join(root, name), "utf8");
    }
  }
  return tree;
}

const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch", ""].join("\n");

/**
 * The situations of Codex's apply_patch scenario suite (codex-rs/apply-patch/tests/fixtures/
 * scenarios, 23 of them), each told here with files and patches of our own. `after` is the tree
 * the patch must leave; `refused` marks a patch that must be refused with the tree untouched.
 */
const SCENARIOS: Array<{
  name: string;
  before: Tree;
  diff: string;
  after?: Tree;
  refused?: RegExp;
}> = [
  {
    name: "an added file is created",
    before: { "keep.txt": "kept\n" },
    diff: patch("*** Add File: notes.md", "+# Notes", "+first entry"),
    after: { "keep.txt": "kept\n", "notes.md": "# Notes\nfirst entry\n" },
  },
  {
    name: "one patch adds a file in a new folder, deletes one and updates one",
    before: { "old.txt": "obsolete\n", "edit.txt": "alpha\nbeta\n" },
    diff: patch(
      "*** Add File: deep/er/fresh.txt",
      "+fresh",
      "*** Delete File: old.txt",
      "*** Update File: edit.txt",
      "@@",
      "-beta",
      "+gamma",
    ),
    after: { "deep/er/fresh.txt": "fresh\n", "edit.txt": "alpha\ngamma\n" },
  },
  {
    name: "two changes in one file",
    before: { "list.txt": "a\nb\nc\nd\ne\n" },
    diff: patch("*** Update File: list.txt", "@@", "-b", "+B", "@@", "-d", "+D"),
    after: { "list.txt": "a\nB\nc\nD\ne\n" },
  },
  {
    name: "an update moves the file into a folder that does not exist yet",
    before: { "src/a.txt": "one\n", "src/b.txt": "other\n" },
    diff: patch("*** Update File: src/a.txt", "*** Move to: lib/moved/a.txt", "@@", "-one", "+uno"),
    after: { "src/b.txt": "other\n", "lib/moved/a.txt": "uno\n" },
  },
  {
    name: "a patch with no file section is refused",
    before: { "x.txt": "x\n" },
    diff: patch(),
    refused: /changes no file/,
  },
  {
    name: "a change whose old line is not in the file is refused",
    before: { "x.txt": "first\nsecond\n" },
    diff: patch("*** Update File: x.txt", "@@", "-third", "+3rd"),
    refused: /FAILED/,
  },
  {
    name: "deleting a file that does not exist is refused",
    before: { "x.txt": "x\n" },
    diff: patch("*** Delete File: ghost.txt"),
    refused: /ghost\.txt/,
  },
  {
    name: "an update with no change is refused",
    before: { "x.txt": "x\n" },
    diff: patch("*** Update File: x.txt"),
    refused: /no added or removed lines/,
  },
  {
    name: "updating a file that does not exist is refused",
    before: { "x.txt": "x\n" },
    diff: patch("*** Update File: absent.txt", "@@", "-a", "+b"),
    refused: /absent\.txt/,
  },
  {
    name: "a move replaces a file already at the destination",
    before: { "from/f.txt": "before\n", "from/g.txt": "stays\n", "to/f.txt": "in the way\n" },
    diff: patch("*** Update File: from/f.txt", "*** Move to: to/f.txt", "@@", "-before", "+after"),
    after: { "from/g.txt": "stays\n", "to/f.txt": "after\n" },
  },
  {
    name: "an added file replaces one that exists",
    before: { "dup.txt": "previous\n" },
    diff: patch("*** Add File: dup.txt", "+replacement"),
    after: { "dup.txt": "replacement\n" },
  },
  {
    name: "deleting a folder is refused",
    before: { "folder/inside.txt": "in\n" },
    diff: patch("*** Delete File: folder"),
    refused: /folder/,
  },
  {
    name: "an unknown *** header is refused",
    before: { "x.txt": "x\n" },
    diff: patch("*** Rename File: x.txt"),
    refused: /not a file header/,
  },
  {
    name: "an update of a file without a final newline leaves it with one",
    before: { "bare.txt": "only line" },
    diff: patch("*** Update File: bare.txt", "@@", "-only line", "+line one", "+line two"),
    after: { "bare.txt": "line one\nline two\n" },
  },
  {
    // Codex keeps the added file; pleach applies every file or none.
    name: "a failing section after a good one leaves nothing changed",
    before: { "x.txt": "x\n" },
    diff: patch(
      "*** Add File: made.txt",
      "+made",
      "*** Update File: nowhere.txt",
      "@@",
      "-a",
      "+b",
    ),
    refused: /nowhere\.txt/,
  },
  {
    name: "a change of added lines only, without context, goes at the end",
    before: { "log.txt": "start\nmiddle\n" },
    diff: patch("*** Update File: log.txt", "@@", "+end 1", "+end 2"),
    after: { "log.txt": "start\nmiddle\nend 1\nend 2\n" },
  },
  {
    name: "a file header indented with spaces is read",
    before: { "pad.txt": "before\n" },
    diff: patch("   *** Update File: pad.txt", "@@", "-before", "+after"),
    after: { "pad.txt": "after\n" },
  },
  {
    name: "begin and end markers with spaces around them are read",
    before: { "pad.txt": "left\n" },
    diff: "  *** Begin Patch\n*** Update File: pad.txt\n@@\n-left\n+right\n*** End Patch  \n",
    after: { "pad.txt": "right\n" },
  },
  {
    name: "non-ASCII context and changes",
    before: { "u.txt": "head\nüber straße\ntail\n" },
    diff: patch("*** Update File: u.txt", "@@", " head", "-über straße", "+über straße 🚀"),
    after: { "u.txt": "head\nüber straße 🚀\ntail\n" },
  },
  {
    name: "a deleted file is gone and the rest stays",
    before: { "stay.txt": "stay\n", "drop.txt": "drop\n" },
    diff: patch("*** Delete File: drop.txt"),
    after: { "stay.txt": "stay\n" },
  },
  {
    name: "marker lines with a space before or after them are read",
    before: { "m.txt": "up\n" },
    diff: "*** Begin Patch   \n*** Update File: m.txt\n@@\n-up\n+down\n   *** End Patch\n",
    after: { "m.txt": "down\n" },
  },
  {
    name: "a change that only removes a line between context lines",
    before: { "r.txt": "keep a\ncut\nkeep b\n" },
    diff: patch("*** Update File: r.txt", "@@", " keep a", "-cut", " keep b"),
    after: { "r.txt": "keep a\nkeep b\n" },
  },
  {
    name: "*** End of File pins the change to the end of the file",
    before: { "t.txt": "top\nlast\n" },
    diff: patch("*** Update File: t.txt", "@@", " top", "-last", "+very last", "*** End of File"),
    after: { "t.txt": "top\nvery last\n" },
  },
];

describe("apply_diff with V4A patches: Codex's apply_patch scenarios", () => {
  it("has the suite's 23 scenarios", () => {
    expect(SCENARIOS).toHaveLength(23);
  });

  it.each(SCENARIOS)("$name", async ({ before, diff, after, refused }) => {
    const root = await useTempDir("pleach-v4a-");
    await plant(root, before);
    const client = await createLocalSandbox({ root, mode: "danger-full-access" });
    const tool = createApplyDiffTool(client);
    if (refused !== undefined) {
      const outcome = await tool.execute({ path: ".", diff }, {}).then(
        (output) => tool.toModelOutput(output),
        (error: Error) => ({ output: error.message, error: true }),
      );
      expect(outcome.error).toBe(true);
      expect(outcome.output).toMatch(refused);
      expect(await snapshot(root)).toEqual(before);
      return;
    }
    const output = await tool.execute({ path: ".", diff }, {});
    expect(output.conflicts).toEqual([]);
    expect(await snapshot(root)).toEqual(after);
  });
});

describe("apply_diff with V4A patches: order and @@ lines", () => {
  const TWO_FUNCTIONS = [
    "function a() {",
    "  return 1;",
    "}",
    "function b() {",
    "  return 1;",
    "}",
    "",
  ].join("\n");

  async function run(before: Tree, diff: string, requestedPath = ".") {
    const root = await useTempDir("pleach-v4a-");
    await plant(root, before);
    const client = await createLocalSandbox({ root, mode: "danger-full-access" });
    const tool = createApplyDiffTool(client);
    const outcome = await tool.execute({ path: requestedPath, diff }, {}).then(
      (output) => tool.toModelOutput(output),
      (error: Error) => ({ output: error.message, error: true }),
    );
    return { outcome, tree: await snapshot(root) };
  }

  it("an @@ line chooses between places the change's old text has", async () => {
    const diff = patch(
      "*** Update File: f.js",
      "@@ function b() {",
      "-  return 1;",
      "+  return 2;",
    );
    const { outcome, tree } = await run({ "f.js": TWO_FUNCTIONS }, diff);
    // Chosen by the @@ line, as the format means it: no note of a line number or an offset.
    expect(outcome).toEqual({ output: "applied 1 hunk(s)", error: false });
    expect(tree["f.js"]).toBe(TWO_FUNCTIONS.replace(/return 1;\n\}\n$/, "return 2;\n}\n"));
  });

  it("without @@ lines, a text found twice is refused rather than guessed", async () => {
    const diff = patch("*** Update File: f.js", "@@", "-  return 1;", "+  return 2;");
    const { outcome, tree } = await run({ "f.js": TWO_FUNCTIONS }, diff);
    expect(outcome.error).toBe(true);
    expect(outcome.output).toContain("Hunk #1 FAILED");
    expect(outcome.output).toContain("put the line that starts its function or class after @@");
    expect(outcome.output).not.toContain("line number");
    expect(tree["f.js"]).toBe(TWO_FUNCTIONS);
  });

  it("each change is looked for after the one before", async () => {
    const diff = patch(
      "*** Update File: f.js",
      "@@ function a() {",
      "-  return 1;",
      "+  return 10;",
      "@@",
      "-  return 1;",
      "+  return 20;",
    );
    const { tree } = await run({ "f.js": TWO_FUNCTIONS }, diff);
    expect(tree["f.js"]).toBe(
      TWO_FUNCTIONS.replace("return 1", "return 10").replace("return 1;", "return 20;"),
    );
  });

  it("an @@ line that is not in the file is a conflict, and nothing is written", async () => {
    const diff = patch(
      "*** Update File: f.js",
      "@@ function c() {",
      "-  return 1;",
      "+  return 3;",
    );
    const { outcome, tree } = await run({ "f.js": TWO_FUNCTIONS }, diff);
    expect(outcome.error).toBe(true);
    expect(outcome.output).toContain('its @@ line "function c() {" is not in the file');
    expect(tree["f.js"]).toBe(TWO_FUNCTIONS);
  });

  it("added lines after an @@ line go right below it", async () => {
    const diff = patch("*** Update File: f.js", "@@ function b() {", "+  // b");
    const { tree } = await run({ "f.js": TWO_FUNCTIONS }, diff);
    expect(tree["f.js"]).toBe(
      TWO_FUNCTIONS.replace("function b() {\n", "function b() {\n  // b\n"),
    );
  });

  it("takes the one file it names as path, refuses another path, and reads a cut-off patch as such", async () => {
    const diff = patch(
      "*** Update File: f.js",
      "@@",
      " function a() {",
      "-  return 1;",
      "+  return 0;",
    );
    expect((await run({ "f.js": TWO_FUNCTIONS }, diff, "f.js")).outcome.error).toBe(false);
    const other = await run({ "f.js": TWO_FUNCTIONS }, diff, "g.js");
    expect(other.outcome.output).toContain('names its files itself (f.js): pass path "."');
    const cut = await run({ "f.js": TWO_FUNCTIONS }, diff.replace("*** End Patch\n", ""));
    expect(cut.outcome.output).toContain("may have been cut off");
  });
});

const commandsRun =
  (await createLocalSandbox({ root: process.cwd(), mode: "workspace-write" })).backend !== "none";

describe("a patch that fails once it is checked loses no file", () => {
  it("refuses a protected write before the delete that comes first in the patch", async () => {
    const root = await useTempDir("pleach-v4a-loss-");
    await plant(root, { "a.txt": "keep me\n", ".git/HEAD": "ref: refs/heads/main\n" });
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    const tool = createApplyDiffTool(client);
    const diff = patch(
      "*** Delete File: a.txt",
      "*** Add File: .git/hooks/pre-commit",
      "+#!/bin/sh",
      "+echo pwned",
    );
    await expect(tool.execute({ path: ".", diff }, {})).rejects.toMatchObject({
      code: "PROTECTED_PATH",
      message: expect.stringContaining("nothing was changed"),
    });
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("keep me\n");
  });

  it.skipIf(!commandsRun)(
    `deletes only once every write is done: a write that fails keeps the deleted file and says what was written${commandsRun ? "" : " (skipped: no OS sandbox here to run the delete)"}`,
    async () => {
      const root = await useTempDir("pleach-v4a-loss-");
      await plant(root, { "a.txt": "keep me\n", "b.txt": "one\n", "c.txt": "two\n" });
      const local = await createLocalSandbox({ root, mode: "workspace-write" });
      // A client whose second write fails, as a remote one whose connection drops.
      let writes = 0;
      const client = Object.assign(Object.create(local), {
        writeFile: async (file: string, content: string) => {
          writes += 1;
          if (writes === 2) throw new Error("the connection dropped");
          return local.writeFile(file, content);
        },
      });
      const tool = createApplyDiffTool(client);
      const diff = patch(
        "*** Delete File: a.txt",
        "*** Update File: b.txt",
        "-one",
        "+ONE",
        "*** Update File: c.txt",
        "-two",
        "+TWO",
      );
      await expect(tool.execute({ path: ".", diff }, {})).rejects.toMatchObject({
        message: expect.stringContaining("already written: b.txt; no file was deleted"),
      });
      const tree = await snapshot(root);
      expect([tree["a.txt"], tree["b.txt"], tree["c.txt"]]).toEqual([
        "keep me\n",
        "ONE\n",
        "two\n",
      ]);
    },
  );
});
