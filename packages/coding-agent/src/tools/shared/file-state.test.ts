import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { defineTool } from "@pleach/core";
import { makeTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createApplyDiffTool } from "../apply-diff/tool.js";
import { createCodingAgentTools } from "../coding-agent-tools.js";
import { createReadFileTool } from "../read-file/tool.js";
import { createFileState, diffFileNames, withFileState } from "./file-state.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup(files: Record<string, string>) {
  const temp = await makeTempDir("pleach-file-state-");
  cleanups.push(temp.cleanup);
  for (const [name, content] of Object.entries(files)) {
    await writeFile(path.join(temp.dir, name), content);
  }
  const client = await createLocalSandbox({ root: temp.dir, mode: "workspace-write" });
  const fileState = createFileState();
  const tools = new Map(
    createCodingAgentTools(client, { fileState }).map((tool) => [tool.name, tool]),
  );
  const tool = (name: string) => {
    const found = tools.get(name);
    if (found === undefined) throw new Error(name);
    return found;
  };
  return { root: temp.dir, client, fileState, tool };
}

const TWO_FILE_DIFF = `--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-one
+ONE
--- a/b.txt
+++ b/b.txt
@@ -1 +1 @@
-two
+TWO
`;

describe("session file state", () => {
  it("comes from what each tool declares: read_file reads, three tools write", async () => {
    const { client } = await setup({});
    const declared = createCodingAgentTools(client).map(({ name, files }) => ({
      name,
      reads: files?.reads?.({ path: "x", diff: "" }) ?? [],
      writes: files?.writes?.({ path: "x", diff: "" }) ?? [],
      rereads: files?.readKey !== undefined,
    }));
    expect(declared.filter(({ reads, writes }) => reads.length + writes.length > 0)).toEqual([
      { name: "read_file", reads: ["x"], writes: [], rereads: true },
      { name: "edit_file", reads: [], writes: ["x"], rereads: false },
      { name: "apply_diff", reads: [], writes: ["x"], rereads: false },
      { name: "write_file", reads: [], writes: ["x"], rereads: false },
    ]);
    const applyDiff = createCodingAgentTools(client, { only: ["apply_diff"] })[0];
    expect(applyDiff?.files?.writes?.({ path: ".", diff: TWO_FILE_DIFF })).toEqual([
      "a.txt",
      "b.txt",
    ]);
    expect(applyDiff?.files?.writes?.({ path: "./", diff: TWO_FILE_DIFF })).toEqual([
      "a.txt",
      "b.txt",
    ]);
  });

  it("refuses apply_diff over several files until every one of them was read", async () => {
    const { root, tool, fileState } = await setup({ "a.txt": "one\n", "b.txt": "two\n" });
    await tool("read_file").execute({ path: "a.txt" });
    await expect(
      tool("apply_diff").execute({ path: ".", diff: TWO_FILE_DIFF }),
    ).rejects.toMatchObject({ code: "STALE_FILE", details: { path: "b.txt", reason: "not-read" } });
    await tool("read_file").execute({ path: "b.txt" });
    await expect(
      tool("apply_diff").execute({ path: ".", diff: TWO_FILE_DIFF }),
    ).resolves.toMatchObject({ hunksApplied: 2 });
    expect(await readFile(path.join(root, "b.txt"), "utf8")).toBe("TWO\n");
    expect(fileState.get("b.txt")?.via).toBe("write");
  });

  it("lets write_file and edit_file create new files without a read", async () => {
    const { root, tool } = await setup({});
    await tool("write_file").execute({ path: "n.txt", content: "n\n" });
    await tool("edit_file").execute({ path: "m.txt", old: "", new: "m\n" });
    // Their own writes refresh the record: editing again needs no read.
    await tool("edit_file").execute({ path: "m.txt", old: "m", new: "mm" });
    expect(await readFile(path.join(root, "m.txt"), "utf8")).toBe("mm\n");
  });

  it("refuses a write after a change on disk, and says to read again", async () => {
    const { root, tool } = await setup({ "a.txt": "one\n" });
    await tool("read_file").execute({ path: "a.txt", offset: 1, limit: 1 });
    await writeFile(path.join(root, "a.txt"), "one by the user\n");
    const refusal = tool("write_file").execute({ path: "a.txt", content: "x\n" });
    await expect(refusal).rejects.toMatchObject({ code: "STALE_FILE" });
    await expect(refusal).rejects.toThrow(/read_file on a\.txt again/);
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("one by the user\n");
  });

  it("wraps any single tool for callers of the factories, from the files it declares", async () => {
    const { client } = await setup({ "a.txt": "one\n" });
    const fileState = createFileState();
    const read = withFileState(createReadFileTool(client), { client, fileState });
    const applyDiff = withFileState(createApplyDiffTool(client), { client, fileState });
    const diff = "@@ -1 +1 @@\n-one\n+uno\n";
    await expect(applyDiff.execute({ path: "a.txt", diff })).rejects.toMatchObject({
      code: "STALE_FILE",
    });
    await read.execute({ path: "./a.txt" });
    await expect(applyDiff.execute({ path: "a.txt", diff })).resolves.toMatchObject({
      hunksApplied: 1,
    });
    expect(read.name).toBe("read_file");
    expect(read.annotations.readOnlyHint).toBe(true);
    // The wrapped tool keeps its declaration, for a runtime's memory of reads.
    expect(read.files?.reads?.({ path: "b.txt" })).toEqual(["b.txt"]);
  });

  it("leaves a tool that declares no files as it is, unless told which files it writes", async () => {
    const { client, root } = await setup({ "a.txt": "one\n" });
    const fileState = createFileState();
    const touch = defineTool({
      name: "touch_a",
      description: "Overwrite a.txt.",
      inputSchema: z.object({}),
      outputSchema: z.object({}),
      execute: async () => {
        await client.writeFile("a.txt", "touched\n");
        return {};
      },
    });
    expect(withFileState(touch, { client, fileState })).toBe(touch);
    const guarded = withFileState(touch, { client, fileState, files: { writes: () => ["a.txt"] } });
    await expect(guarded.execute({})).rejects.toMatchObject({
      code: "STALE_FILE",
      details: { path: "a.txt", reason: "not-read" },
    });
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("one\n");
  });

  it("takes file names from diff headers only", () => {
    expect(diffFileNames(TWO_FILE_DIFF)).toEqual(["a.txt", "b.txt"]);
    expect(
      diffFileNames("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n@@ -1 +1 @@\n--- y\n+z\n"),
    ).toEqual(["new.txt"]);
    expect(diffFileNames("@@ -1 +1 @@\n-a\n+b\n")).toEqual([]);
  });
});
