import { describe, expect, it } from "vitest";
import { localWorkspace } from "../../test-support/local-workspace.js";
import { createApplyDiffTool } from "../apply-diff/tool.js";
import { createEditFileTool } from "../edit-file/tool.js";
import { createWriteFileTool } from "../write-file/tool.js";
import { MAX_SYNTAX_CHECK_BYTES } from "./syntax-check.js";

const MODULE = [
  "export class Counter {",
  "  private count = 0;",
  "  add(step: number): void {",
  "    this.count += step;",
  "  }",
  "}",
  "",
].join("\n");

const SCRIPT = ["def total(items):", "    return sum(items)", ""].join("\n");

describe("write_file's syntax check", () => {
  it("reports the errors of a new file and of a replaced one, but not those it already had", async () => {
    const { client, put } = await localWorkspace();
    const tool = createWriteFileTool(client);
    const created = await tool.execute({ path: "a.ts", content: "const a = (1;\n" });
    expect(created.syntaxErrors).toEqual([
      {
        path: "a.ts",
        count: 1,
        errors: [{ line: 1, message: expect.any(String) }],
        edit: expect.any(Object),
      },
    ]);
    expect(tool.toModelOutput(created).output).toMatch(
      /^created a\.ts \(14 bytes\)\nThe write left a syntax error in a\.ts at line 1 \(.+\); fix it before running the code\.$/,
    );
    // The same error written again is not new; the text around it changed.
    const again = await tool.execute({ path: "a.ts", content: "// x\nconst a = (1;\n" });
    expect(again.syntaxErrors).toBeUndefined();
    await put("b.ts", MODULE);
    const replaced = await tool.execute({ path: "b.ts", content: MODULE.replace("{\n", "\n") });
    expect(replaced.syntaxErrors?.[0]?.path).toBe("b.ts");
  });

  it("refuses with rejectSyntaxErrors and leaves the file as it was", async () => {
    const { client, put, bytes } = await localWorkspace();
    await put("b.ts", MODULE);
    const before = await bytes("b.ts");
    await expect(
      createWriteFileTool(client).execute({
        path: "b.ts",
        content: MODULE.replace("this.count += step;", "this.count += (step;"),
        rejectSyntaxErrors: true,
      }),
    ).rejects.toMatchObject({
      code: "SYNTAX_ERROR",
      message: expect.stringMatching(
        /^write_file refused the write: it would leave a syntax error in b\.ts at line 4 \(.+\)\. Nothing was written\./,
      ),
    });
    expect((await bytes("b.ts")).equals(before)).toBe(true);
  });

  it("passes over files without a parser, base64 content and files over the size bound", async () => {
    const { client } = await localWorkspace();
    const tool = createWriteFileTool(client);
    const plain = await tool.execute({ path: "notes.txt", content: "const a = (1;\n" });
    expect(plain.syntaxErrors).toBeUndefined();
    const binary = await tool.execute({
      path: "a.js",
      content: Buffer.from("const a = (1;\n").toString("base64"),
      encoding: "base64",
    });
    expect(binary.syntaxErrors).toBeUndefined();
    const padding = "// padding\n".repeat(Math.ceil(MAX_SYNTAX_CHECK_BYTES / 11));
    const large = await tool.execute({ path: "big.js", content: `${padding}const a = (1;\n` });
    expect(large.syntaxErrors).toBeUndefined();
    const small = await tool.execute({ path: "small.js", content: "const a = (1;\n" });
    expect(small.syntaxErrors).toHaveLength(1);
  });
});

describe("edit_file's syntax check", () => {
  it("checks a file written whole with an empty old, against what it held", async () => {
    const { client, put } = await localWorkspace();
    await put("a.py", "def f(:\n    pass\n");
    const tool = createEditFileTool(client);
    const kept = await tool.execute({ path: "a.py", old: "", new: "# x\ndef f(:\n    pass\n" });
    expect(kept.syntaxErrors).toBeUndefined();
    const broke = await tool.execute({ path: "b.py", old: "", new: "def g(:\n    pass\n" });
    expect(tool.toModelOutput(broke).output).toMatch(
      /^wrote b\.py\nThe edit left a syntax error in b\.py at line 1 \(.+\); fix it before running the code\.$/,
    );
  });

  it("lists the first five new errors and counts the rest", async () => {
    const { client, put } = await localWorkspace();
    const lines = Array.from({ length: 8 }, (_, index) => `f(${index});`);
    await put("a.ts", `${lines.join("\n")}\n`);
    const tool = createEditFileTool(client);
    const output = await tool.execute({
      path: "a.ts",
      old: `${lines.join("\n")}\n`,
      new: `${lines.map((line) => line.replace(";", ");")).join("\n")}\n`,
    });
    expect(output.syntaxErrors?.[0]?.count).toBe(8);
    expect(output.syntaxErrors?.[0]?.errors.map(({ line }) => line)).toEqual([1, 2, 3, 4, 5]);
    expect(tool.toModelOutput(output).output).toContain(
      'The edit left 8 syntax errors in a.ts: line 1 (unexpected ")"), line 2 (unexpected ")"), line 3 (unexpected ")"), line 4 (unexpected ")"), line 5 (unexpected ")") and 3 more (the change at lines 1-8 added 8 ")", so the parentheses no longer balance); fix them before running the code.',
    );
  });
});

const TWO_FILES = `--- a/a.ts
+++ b/a.ts
@@ -2,1 +2,1 @@
-  private count = 0;
+  private count = 1;
--- a/b.py
+++ b/b.py
@@ -2,1 +2,1 @@
-    return sum(items)
+    return sum(items))
`;

describe("apply_diff's syntax check", () => {
  it("reports the file a multi-file diff broke, with its line", async () => {
    const { client, put, text } = await localWorkspace();
    await put("a.ts", MODULE);
    await put("b.py", SCRIPT);
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ path: ".", diff: TWO_FILES });
    expect(output.syntaxErrors).toEqual([
      {
        path: "b.py",
        count: 1,
        errors: [{ line: 2, message: expect.any(String) }],
        edit: expect.any(Object),
      },
    ]);
    expect(await text("b.py")).toContain("sum(items))\n");
    expect(tool.toModelOutput(output).output).toMatch(
      /^applied 2 hunk\(s\) \(modified a\.ts, modified b\.py\)\nThe diff left a syntax error in b\.py at line 2 \(.+\); fix it before running the code\.$/,
    );
  });

  it("with rejectSyntaxErrors refuses the whole diff when one file breaks: neither is written", async () => {
    const { client, put, bytes } = await localWorkspace();
    await put("a.ts", MODULE);
    await put("b.py", SCRIPT);
    const before = { a: await bytes("a.ts"), b: await bytes("b.py") };
    await expect(
      createApplyDiffTool(client).execute({ path: ".", diff: TWO_FILES, rejectSyntaxErrors: true }),
    ).rejects.toMatchObject({
      code: "SYNTAX_ERROR",
      message: expect.stringMatching(
        /^apply_diff refused the diff: it would leave a syntax error in b\.py at line 2 \(.+\)\. Nothing was written\./,
      ),
      details: { syntaxErrors: [{ path: "b.py", count: 1 }] },
    });
    expect((await bytes("a.ts")).equals(before.a)).toBe(true);
    expect((await bytes("b.py")).equals(before.b)).toBe(true);
  });

  it("applies a diff that breaks nothing with rejectSyntaxErrors, and reports nothing", async () => {
    const { client, put } = await localWorkspace();
    await put("a.ts", MODULE);
    const output = await createApplyDiffTool(client).execute({
      path: "a.ts",
      diff: "@@ -2,1 +2,1 @@\n-  private count = 0;\n+  private count = 1;\n",
      rejectSyntaxErrors: true,
    });
    expect(output).toMatchObject({ hunksApplied: 1 });
    expect(output.syntaxErrors).toBeUndefined();
  });

  it('checks what engine "patch" wrote, and refuses rejectSyntaxErrors with it', async () => {
    const { client, put, bytes } = await localWorkspace();
    await put("b.py", SCRIPT);
    const tool = createApplyDiffTool(client);
    const diff =
      "--- b.py\n+++ b.py\n@@ -1,2 +1,2 @@\n def total(items):\n-    return sum(items)\n+    return sum(items))\n";
    const before = await bytes("b.py");
    await expect(
      tool.execute({ engine: "patch", path: "b.py", diff, rejectSyntaxErrors: true }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect((await bytes("b.py")).equals(before)).toBe(true);
    const output = await tool.execute({ engine: "patch", path: "b.py", diff });
    expect(output.syntaxErrors).toEqual([
      {
        path: "b.py",
        count: 1,
        errors: [{ line: 2, message: expect.any(String) }],
        edit: expect.any(Object),
      },
    ]);
    expect(tool.toModelOutput(output).output).toContain(
      "The diff left a syntax error in b.py at line 2 (",
    );
  });
});
