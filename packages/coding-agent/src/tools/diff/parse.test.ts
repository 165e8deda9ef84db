import { describe, expect, it } from "vitest";
import { applyFilePatch } from "./apply.js";
import { parseUnifiedDiff } from "./parse.js";

/** Each file's old path, new path and operation. */
const sides = (diff: string) =>
  parseUnifiedDiff(diff).map(({ oldPath, newPath, operation }) => [oldPath, newPath, operation]);

describe("parseUnifiedDiff", () => {
  it("reads git headers, a/ b/ prefixes, timestamps, quoted paths, /dev/null", () => {
    const diff = [
      "diff --git a/src/x.ts b/src/x.ts",
      "index 123..456 100644",
      "--- a/src/x.ts\t2024-01-02 03:04:05.000000000 +0100",
      "+++ b/src/x.ts\t2024-01-02 03:04:06.000000000 +0100",
      "@@ -1 +1 @@",
      "-a",
      "+b",
      "--- /dev/null",
      '+++ "b/sp ace/\\303\\251.txt"',
      "@@ -0,0 +1 @@",
      "+new",
      "--- a/gone.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-old",
    ].join("\n");
    expect(sides(diff)).toEqual([
      ["src/x.ts", "src/x.ts", "modify"],
      [undefined, "sp ace/é.txt", "create"],
      ["gone.txt", undefined, "delete"],
    ]);
  });

  it("strips b/ a/ prefixes of a reversed diff (git diff -R), /dev/null sides by its git line", () => {
    const diff = [
      "diff --git b/src/x.ts a/src/x.ts",
      "--- b/src/x.ts",
      "+++ a/src/x.ts",
      "@@ -1 +1 @@",
      "-b",
      "+a",
      "diff --git b/added.txt a/added.txt",
      "deleted file mode 100644",
      "--- b/added.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-new",
      "diff --git b/gone.txt a/gone.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ a/gone.txt",
      "@@ -0,0 +1 @@",
      "+old",
      // Without a reversed git line, `a/` after /dev/null is a folder named a.
      "--- /dev/null",
      "+++ a/kept.txt",
      "@@ -0,0 +1 @@",
      "+x",
    ].join("\n");
    expect(sides(diff)).toEqual([
      ["src/x.ts", "src/x.ts", "modify"],
      ["added.txt", undefined, "delete"],
      [undefined, "gone.txt", "create"],
      [undefined, "a/kept.txt", "create"],
    ]);
  });

  it("recounts a body whose counts are wrong or missing, and ignores fences and prose", () => {
    const diff = "Sure:\n```diff\n@@ -1,9 +1,1 @@\n a\n-b\n+c\n\n d\n```\nDone.\n";
    const [patch] = parseUnifiedDiff(diff);
    expect(patch?.hunks[0]?.recounted).toBe(true);
    expect(patch?.hunks[0]?.lines.map((line) => `${line.kind}:${line.text}`)).toEqual([
      "context:a",
      "remove:b",
      "add:c",
      "context:",
      "context:d",
    ]);
    expect(
      applyFilePatch(
        "a\nb\n\nd\n",
        patch ?? { oldPath: undefined, newPath: undefined, operation: "modify", hunks: [] },
      ).text,
    ).toBe("a\nc\n\nd\n");
  });

  it("keeps a removed `-- x` line next to an added `++ y` line when the counts say so", () => {
    const [patch] = parseUnifiedDiff(
      "--- q.sql\n+++ q.sql\n@@ -1,3 +1,3 @@\n select 1;\n--- x\n+++ y\n select 2;\n",
    );
    expect(patch?.hunks[0]?.lines.map((line) => line.kind)).toEqual([
      "context",
      "remove",
      "add",
      "context",
    ]);
  });

  it("drops CRs of a diff sent with CRLF line ends, keeps those of a diff of a CRLF file", () => {
    const [transported] = parseUnifiedDiff("@@ -1 +1 @@\r\n-a\r\n+b\r\n");
    expect(transported?.hunks[0]?.lines.map((line) => line.text)).toEqual(["a", "b"]);
    const [crlfFile] = parseUnifiedDiff("@@ -1 +1 @@\n-a\r\n+b\r\n");
    expect(crlfFile?.hunks[0]?.lines.map((line) => line.text)).toEqual(["a\r", "b\r"]);
  });
});

describe("applyFilePatch", () => {
  const patchOf = (diff: string) => {
    const [patch] = parseUnifiedDiff(diff);
    if (patch === undefined) throw new Error("no patch");
    return patch;
  };

  it("keeps a missing final newline when the diff leaves out the marker, and follows markers", () => {
    expect(applyFilePatch("a\nb", patchOf("@@ -1,2 +1,2 @@\n a\n-b\n+c\n")).text).toBe("a\nc");
    expect(
      applyFilePatch("a\nb", patchOf("@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"))
        .text,
    ).toBe("a\nb\n");
  });

  it("drops a wrong outer context line, never a changed line's neighbour", () => {
    const file = "1\n2\n3\n4\n5\n6\n7\n";
    const result = applyFilePatch(
      file,
      patchOf("@@ -1,7 +1,7 @@\n one\n 2\n 3\n-4\n+four\n 5\n 6\n seven\n"),
    );
    expect(result.text).toBe("1\n2\n3\nfour\n5\n6\n7\n");
    expect(result.hunks[0]).toMatchObject({ status: "applied", contextDropped: 2 });
    const neighbour = applyFilePatch(file, patchOf("@@ -2,3 +2,3 @@\n 2\n three\n-4\n+four\n 5\n"));
    expect(neighbour.conflicts).toHaveLength(1);
  });

  it("re-indents added lines by the indentation change of their neighbours", () => {
    const file = "def f():\n    if x:\n        return 1\n";
    const result = applyFilePatch(
      file,
      patchOf("@@ -1,3 +1,4 @@\n def f():\n  if x:\n-    return 1\n+    y = 1\n+    return y\n"),
    );
    expect(result.hunks[0]?.tolerance).toBe("indentation");
    expect(result.text).toBe("def f():\n    if x:\n        y = 1\n        return y\n");
  });
});
