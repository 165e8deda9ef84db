import { execFileSync } from "node:child_process";
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { type CommandWrapper, createCommandWrapper, createLocalSandbox } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { APPLY_DIFF_PATCH_FILE, createApplyDiffTool } from "./tool.js";

async function workspace(mode: "danger-full-access" | "read-only" = "danger-full-access") {
  const temp = await useTempDir("pleach-apply-diff-");
  return { root: temp, client: await createLocalSandbox({ root: temp, mode }) };
}

/** A workspace whose `patch` is a script in front of the real one (a "different patch"). */
async function workspaceWithPatchShim(script: string) {
  const shims = await useTempDir("pleach-patch-shim-");
  await writeFile(path.join(shims, "patch"), `#!/bin/bash\n${script}\n`);
  await chmod(path.join(shims, "patch"), 0o755);
  const base = createCommandWrapper();
  const commandWrapper: CommandWrapper = {
    backend: base.backend,
    async invocation(request) {
      const invocation = await base.invocation(request);
      const PATH = `${shims}:${invocation.env.PATH ?? "/usr/bin:/bin"}`;
      return { ...invocation, env: { ...invocation.env, PATH } };
    },
  };
  const temp = await useTempDir("pleach-apply-diff-");
  const client = await createLocalSandbox({
    root: temp,
    mode: "danger-full-access",
    commandWrapper,
  });
  return { root: temp, client };
}

/** Lines "1".."30", newline-terminated. */
const THIRTY = `${Array.from({ length: 30 }, (_, index) => String(index + 1)).join("\n")}\n`;

/** Changes line 5 to "five" and line 13 to "thirteen": hunks at 2 and at 10. */
const TWO_HUNKS = `--- numbers.txt
+++ numbers.txt
@@ -2,7 +2,7 @@
 2
 3
 4
-5
+five
 6
 7
 8
@@ -10,7 +10,7 @@
 10
 11
 12
-13
+thirteen
 14
 15
 16
`;

const PATCHED = THIRTY.replace("\n5\n", "\nfive\n").replace("\n13\n", "\nthirteen\n");

async function files(root: string): Promise<string[]> {
  return (await readdir(root)).sort();
}

describe('apply_diff with engine: "patch" (the original patch protocol)', () => {
  it("applies a clean diff and counts its hunks", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ engine: "patch", path: "numbers.txt", diff: TWO_HUNKS });
    expect(output).toEqual({ hunksApplied: 2, conflicts: [] });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
    expect(await files(root)).toEqual(["numbers.txt"]);
    expect(tool.toModelOutput(output)).toMatchInlineSnapshot(`
      {
        "error": false,
        "output": "applied 2 hunk(s)",
      }
    `);
  });

  it("counts hunks applied at an offset or with fuzz, and leaves no .orig file", async () => {
    const { root, client } = await workspace();
    // Two lines more at the top (offset 2), and hunk 2's first context line changed (fuzz 1).
    const shifted = `x\ny\n${THIRTY.replace("\n10\n", "\nten\n")}`;
    await writeFile(path.join(root, "numbers.txt"), shifted);
    const output = await createApplyDiffTool(client).execute({
      engine: "patch",
      path: "numbers.txt",
      diff: TWO_HUNKS,
    });
    expect(output).toEqual({ hunksApplied: 2, conflicts: [] });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(
      `x\ny\n${PATCHED.replace("\n10\n", "\nten\n")}`,
    );
    expect(await files(root)).toEqual(["numbers.txt"]);
  });

  it("reports a failing hunk as a conflict and keeps the hunks that applied", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY.replace("\n13\n", "\nXIII\n"));
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ engine: "patch", path: "numbers.txt", diff: TWO_HUNKS });
    expect(output).toEqual({ hunksApplied: 1, conflicts: ["Hunk #2 FAILED at 10."] });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(
      THIRTY.replace("\n5\n", "\nfive\n").replace("\n13\n", "\nXIII\n"),
    );
    // Neither a .rej nor an .orig file nor the patch file is left behind.
    expect(await files(root)).toEqual(["numbers.txt"]);
    expect(tool.toModelOutput(output)).toMatchInlineSnapshot(`
      {
        "error": true,
        "output": "applied 1 hunk(s); 1 conflict(s):
      Hunk #2 FAILED at 10.
      Hunks that failed were not applied; the others were. Read the file again and send a fresh diff for the failed hunks only, or use edit_file.",
      }
    `);
  });

  it("skips an already-applied diff instead of reversing it", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), PATCHED);
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ engine: "patch", path: "numbers.txt", diff: TWO_HUNKS });
    expect(output.hunksApplied).toBe(0);
    expect(output.conflicts).toEqual([
      "Reversed (or previously applied) patch detected!  Skipping patch.",
      "Hunk #1 ignored at 2.",
      "Hunk #2 ignored at 10.",
    ]);
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
    expect(await files(root)).toEqual(["numbers.txt"]);
    expect(tool.toModelOutput(output).output).toContain("looks already applied");
  });

  it("applies an LF diff to a CRLF file and keeps the file CRLF", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY.replaceAll("\n", "\r\n"));
    const output = await createApplyDiffTool(client).execute({
      engine: "patch",
      path: "numbers.txt",
      diff: TWO_HUNKS,
    });
    expect(output).toEqual({ hunksApplied: 2, conflicts: [] });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(
      PATCHED.replaceAll("\n", "\r\n"),
    );
  });

  it("applies a CRLF diff to an LF file and keeps the file LF", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const output = await createApplyDiffTool(client).execute({
      engine: "patch",
      path: "numbers.txt",
      diff: TWO_HUNKS.replaceAll("\n", "\r\n"),
    });
    expect(output).toEqual({ hunksApplied: 2, conflicts: [] });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
  });

  it("applies a diff without ---/+++ lines, and one ending without a newline", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const hunksOnly = TWO_HUNKS.split("\n").slice(2).join("\n").trimEnd();
    const output = await createApplyDiffTool(client).execute({
      engine: "patch",
      path: "numbers.txt",
      diff: hunksOnly,
    });
    expect(output).toEqual({ hunksApplied: 2, conflicts: [] });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
  });

  it("patches the given path even when the diff's header names another file", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    await writeFile(path.join(root, "other.txt"), THIRTY);
    const diff = TWO_HUNKS.replaceAll("numbers.txt", "other.txt");
    const output = await createApplyDiffTool(client).execute({
      engine: "patch",
      path: "numbers.txt",
      diff,
    });
    expect(output.hunksApplied).toBe(2);
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
    expect(await readFile(path.join(root, "other.txt"), "utf8")).toBe(THIRTY);
  });

  it("falls back to counting @@ headers when patch applies silently", async () => {
    // A patch that prints no per-hunk lines, as non-GNU implementations do.
    const { root, client } = await workspaceWithPatchShim(
      `out=$(/usr/bin/patch "$@"); status=$?; printf '%s\\n' "$out" | grep -v '^Hunk #'; exit $status`,
    );
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const output = await createApplyDiffTool(client).execute({
      engine: "patch",
      path: "numbers.txt",
      diff: TWO_HUNKS,
    });
    expect(output).toEqual({ hunksApplied: 2, conflicts: [] });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
  });

  it("removes the patch file when patch fails, times out or is missing", async () => {
    const failing = await workspaceWithPatchShim("echo 'patch: **** something broke' >&2; exit 2");
    await writeFile(path.join(failing.root, "numbers.txt"), THIRTY);
    const output = await createApplyDiffTool(failing.client).execute({
      engine: "patch",
      path: "numbers.txt",
      diff: TWO_HUNKS,
    });
    expect(output).toEqual({ hunksApplied: 0, conflicts: ["patch: **** something broke"] });
    expect(await files(failing.root)).toEqual(["numbers.txt"]);

    const hanging = await workspaceWithPatchShim("sleep 30");
    await writeFile(path.join(hanging.root, "numbers.txt"), THIRTY);
    await expect(
      createApplyDiffTool(hanging.client, { timeoutMs: 200 }).execute({
        engine: "patch",
        path: "numbers.txt",
        diff: TWO_HUNKS,
      }),
    ).rejects.toMatchObject({ code: "TIMEOUT" });
    expect(await files(hanging.root)).toEqual(["numbers.txt"]);

    const missing = await workspaceWithPatchShim(
      "echo 'bash: patch: command not found' >&2; exit 127",
    );
    await writeFile(path.join(missing.root, "numbers.txt"), THIRTY);
    await expect(
      createApplyDiffTool(missing.client).execute({
        engine: "patch",
        path: "numbers.txt",
        diff: TWO_HUNKS,
      }),
    ).rejects.toMatchObject({ code: "INTERNAL", message: expect.stringContaining("no `patch`") });
    expect(await files(missing.root)).toEqual(["numbers.txt"]);
  });

  it("removes the patch file when the call is aborted", async () => {
    const { root, client } = await workspaceWithPatchShim("sleep 30");
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const controller = new AbortController();
    const call = createApplyDiffTool(client).execute(
      { engine: "patch", path: "numbers.txt", diff: TWO_HUNKS },
      { abortSignal: controller.signal },
    );
    // Abort once the shim is running, i.e. once the patch file exists.
    while (!(await files(root)).includes(APPLY_DIFF_PATCH_FILE)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: "ABORTED" });
    expect(await files(root)).toEqual(["numbers.txt"]);
  });

  it("reports a diff whose hunk counts are wrong, changing nothing", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const wrongCounts = "--- numbers.txt\n+++ numbers.txt\n@@ -2,7 +2,7 @@\n 2\n-3\n+three\n 4\n";
    const output = await createApplyDiffTool(client).execute({
      engine: "patch",
      path: "numbers.txt",
      diff: wrongCounts,
    });
    expect(output).toEqual({
      hunksApplied: 0,
      conflicts: ["patch: **** unexpected end of file in patch"],
    });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(THIRTY);
    expect(await files(root)).toEqual(["numbers.txt"]);
  });

  it("refuses an empty diff, a diff without hunks and a diff of several files", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const tool = createApplyDiffTool(client);
    for (const diff of ["", "replace line 5 with five", "--- a\n+++ b\n-5\n+five\n"]) {
      await expect(
        tool.execute({ engine: "patch", path: "numbers.txt", diff }),
      ).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("@@ -12,4 +12,5 @@"),
      });
    }
    const twoFiles = `${TWO_HUNKS}--- other.txt\n+++ other.txt\n@@ -1,1 +1,1 @@\n-1\n+one\n`;
    await expect(
      tool.execute({ engine: "patch", path: "numbers.txt", diff: twoFiles }),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("2 files (numbers.txt, other.txt)"),
    });
    // A removed "-- x" line followed by an added "++ y" line inside a hunk is not a file header.
    await writeFile(path.join(root, "q.sql"), "select 1;\n-- x\nselect 2;\n");
    const sqlDiff = "--- q.sql\n+++ q.sql\n@@ -1,3 +1,3 @@\n select 1;\n--- x\n+-- y\n select 2;\n";
    expect(await tool.execute({ engine: "patch", path: "q.sql", diff: sqlDiff })).toEqual({
      hunksApplied: 1,
      conflicts: [],
    });
    expect(await readFile(path.join(root, "q.sql"), "utf8")).toBe("select 1;\n-- y\nselect 2;\n");
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(THIRTY);
  });

  it("refuses paths outside the workspace and files that do not exist", async () => {
    const { root, client } = await workspace();
    const outside = await useTempDir("pleach-outside-");
    await writeFile(path.join(outside, "numbers.txt"), THIRTY);
    await symlink(outside, path.join(root, "out"));
    const tool = createApplyDiffTool(client);
    for (const escaping of [
      "../numbers.txt",
      path.join(outside, "numbers.txt"),
      "out/numbers.txt",
    ]) {
      await expect(
        tool.execute({ engine: "patch", path: escaping, diff: TWO_HUNKS }),
      ).rejects.toMatchObject({
        code: "PATH_ESCAPE",
      });
    }
    // The client resolves `..` by name, the shell through the link: the tool goes by name, so
    // `out/../<name>/numbers.txt` is the workspace's own file, never the one behind the link.
    const inside = path.join(root, path.basename(outside));
    await mkdir(inside);
    await writeFile(path.join(inside, "numbers.txt"), THIRTY);
    const viaLink = `out/../${path.basename(outside)}/numbers.txt`;
    expect(await tool.execute({ engine: "patch", path: viaLink, diff: TWO_HUNKS })).toEqual({
      hunksApplied: 2,
      conflicts: [],
    });
    expect(await readFile(path.join(inside, "numbers.txt"), "utf8")).toBe(PATCHED);
    expect(await readFile(path.join(outside, "numbers.txt"), "utf8")).toBe(THIRTY);
    await expect(
      tool.execute({ engine: "patch", path: "missing.txt", diff: TWO_HUNKS }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("write_file"),
    });
    expect(await files(root)).toEqual([path.basename(outside), "out"].sort());
  });

  it("patches files whose names look like options or shell syntax", async () => {
    const { root, client } = await workspace();
    const tool = createApplyDiffTool(client);
    for (const name of ["-rf", "$(touch pwned)", "it's; rm -rf x", "--help"]) {
      await writeFile(path.join(root, name), THIRTY);
      const output = await tool.execute({ engine: "patch", path: name, diff: TWO_HUNKS });
      expect(output).toEqual({ hunksApplied: 2, conflicts: [] });
      expect(await readFile(path.join(root, name), "utf8")).toBe(PATCHED);
    }
    expect(await files(root)).toEqual(["$(touch pwned)", "--help", "-rf", "it's; rm -rf x"]);
  });

  it("reports a symlinked file as not patched", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "real.txt"), THIRTY);
    await symlink("real.txt", path.join(root, "link.txt"));
    const output = await createApplyDiffTool(client).execute({
      engine: "patch",
      path: "link.txt",
      diff: TWO_HUNKS,
    });
    expect(output.hunksApplied).toBe(0);
    expect(output.conflicts[0]).toBe("File link.txt is not a regular file -- refusing to patch");
    expect(await readFile(path.join(root, "real.txt"), "utf8")).toBe(THIRTY);
  });

  it("is refused by a read-only sandbox before anything is written", async () => {
    const { root, client } = await workspace("read-only");
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    await expect(
      createApplyDiffTool(client).execute({
        engine: "patch",
        path: "numbers.txt",
        diff: TWO_HUNKS,
      }),
    ).rejects.toMatchObject({ code: "READ_ONLY" });
    expect(await files(root)).toEqual(["numbers.txt"]);
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(THIRTY);
  });

  it('explains itself in one paragraph: path ".", all or nothing, failures, engines', async () => {
    const { client } = await workspace();
    const { description } = createApplyDiffTool(client);
    // `pleach tools` and many MCP hosts show only the first line.
    expect(description).not.toContain("\n");
    for (const point of [
      'pass path "."',
      "git diff -R",
      "All or nothing",
      "nothing is written",
      "Hunk #N FAILED",
      "partial: true",
      "is refused",
      'engine: "patch"',
    ]) {
      expect(description).toContain(point);
    }
  });

  it("describes itself as destructive with a strict input schema", async () => {
    const { client } = await workspace();
    expect(createApplyDiffTool(client).annotations).toEqual({
      title: "Apply a diff",
      destructiveHint: true,
    });
    await expect(
      createApplyDiffTool(client).execute({
        engine: "patch",
        path: "a",
        diff: "@@ -1 +1 @@\n-a\n+b\n",
        extra: 1,
      }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});

describe("apply_diff with the pleach engine (default)", () => {
  it("applies a clean diff in-process and reports each hunk", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ path: "numbers.txt", diff: TWO_HUNKS });
    expect(output).toEqual({
      hunksApplied: 2,
      conflicts: [],
      hunks: [
        { file: "numbers.txt", hunk: 1, status: "applied", line: 2, offset: 0, tolerance: "exact" },
        {
          file: "numbers.txt",
          hunk: 2,
          status: "applied",
          line: 10,
          offset: 0,
          tolerance: "exact",
        },
      ],
      files: [{ path: "numbers.txt", action: "modified" }],
    });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
    expect(await files(root)).toEqual(["numbers.txt"]);
    expect(tool.toModelOutput(output)).toEqual({ output: "applied 2 hunk(s)", error: false });
  });

  it("accepts what models send: a fence, prose, git headers, wrong numbers and counts", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), `x\ny\n${THIRTY}`);
    const sloppy = [
      "Here is the change:",
      "```diff",
      "diff --git a/numbers.txt b/numbers.txt",
      "index 1234567..89abcde 100644",
      "--- a/numbers.txt\t2024-05-01 10:00:00.000000000 +0000",
      "+++ b/numbers.txt\t2024-05-01 10:00:01.000000000 +0000",
      "@@ -2,9 +2,4 @@ wrong counts",
      " 3",
      " 4",
      "-5",
      "+five",
      " 6",
      "@@ @@",
      " 12",
      "-13",
      "+thirteen",
      "",
      "```",
      "This renames the numbers.",
    ].join("\n");
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ path: "numbers.txt", diff: sloppy });
    expect(output.conflicts).toEqual([]);
    expect(output.hunks?.map(({ line, offset }) => ({ line, offset }))).toEqual([
      { line: 5, offset: 3 },
      { line: 14, offset: undefined },
    ]);
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(`x\ny\n${PATCHED}`);
    expect(tool.toModelOutput(output)).toMatchInlineSnapshot(`
      {
        "error": false,
        "output": "applied 2 hunk(s)
      Hunk #1 applied at line 5 (offset +3 lines).",
      }
    `);
  });

  it("reports and applies a hunk found only with tolerances, keeping the file's bytes", async () => {
    const { root, client } = await workspace();
    const source = "\uFEFFconst a = “x”;  \r\nconst b = 2;\r\nconst c = 3;\r\n";
    await writeFile(path.join(root, "q.js"), source);
    const diff = '@@ -1,3 +1,3 @@\n const a = "x";\n-const b = 2;\n+const b = 20;\n const c = 3;\n';
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ path: "q.js", diff });
    expect(output.hunks?.[0]?.tolerance).toBe("unicode-punctuation");
    expect(await readFile(path.join(root, "q.js"), "utf8")).toBe(
      "\uFEFFconst a = “x”;  \r\nconst b = 20;\r\nconst c = 3;\r\n",
    );
    expect(tool.toModelOutput(output).output).toMatchInlineSnapshot(`
      "applied 1 hunk(s)
      Hunk #1 applied at line 1 (Unicode quotes/dashes/spaces read as ASCII)."
    `);
  });

  it("refuses an ambiguous hunk listing the candidates, and writes nothing", async () => {
    const { root, client } = await workspace();
    const block = "function f() {\n  return 1;\n}\n";
    const original = `${block}\n// middle\n\n${block}`;
    await writeFile(path.join(root, "dup.js"), original);
    const diff =
      "@@ -40,3 +40,3 @@\n function f() {\n-  return 1;\n+  return 2;\n }\n@@ -5,1 +5,1 @@\n-// middle\n+// centre\n";
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ path: "dup.js", diff });
    expect(output.hunksApplied).toBe(0);
    expect(output.hunks?.map((hunk) => hunk.status)).toEqual(["conflict", "skipped"]);
    expect(await readFile(path.join(root, "dup.js"), "utf8")).toBe(original);
    expect(tool.toModelOutput(output)).toMatchInlineSnapshot(`
      {
        "error": true,
        "output": "applied 0 hunk(s); 1 conflict(s):
      Hunk #1 FAILED at 40: the hunk's old lines match at lines 1 and 7 and its @@ line number does not single one out; add context lines that occur only at the place you mean, or correct the @@ line number
      Nothing was written: apply_diff applies every hunk or none. Read the file again, fix the failed hunks and send the whole diff again (or pass partial: true to apply the others), or use edit_file.",
      }
    `);
    // Line 4 is as near to one copy as to the other; partial application writes the other hunk.
    const partial = await tool.execute({
      path: "dup.js",
      diff: diff.replace("@@ -40,3 +40,3 @@", "@@ -4,3 +4,3 @@"),
      partial: true,
    });
    expect(partial.hunksApplied).toBe(1);
    expect(await readFile(path.join(root, "dup.js"), "utf8")).toBe(
      original.replace("// middle", "// centre"),
    );
    const hinted = await tool.execute({
      path: "dup.js",
      diff: diff.replace("@@ -40,3 +40,3 @@", "@@ -7,3 +7,3 @@"),
    });
    expect(hinted.hunks?.map((hunk) => [hunk.status, hunk.chosenByHint])).toEqual([
      ["applied", true],
      ["already-applied", undefined],
    ]);
    expect(await readFile(path.join(root, "dup.js"), "utf8")).toBe(
      `${block}\n// centre\n\n${block.replace("return 1", "return 2")}`,
    );
  });

  it("reports an already-applied diff without applying it twice", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), PATCHED);
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ path: "numbers.txt", diff: TWO_HUNKS });
    expect(output.conflicts).toEqual([]);
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
    expect(tool.toModelOutput(output)).toMatchInlineSnapshot(`
      {
        "error": false,
        "output": "applied 0 hunk(s)
      Hunk #1 is already applied (at line 2); left as is.
      Hunk #2 is already applied (at line 10); left as is.",
      }
    `);
  });

  it("says where a hunk's old lines differ from the file", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY.replace("\n13\n", "\nXIII\n"));
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ path: "numbers.txt", diff: TWO_HUNKS });
    expect(output.conflicts).toMatchInlineSnapshot(`
      [
        "Hunk #2 FAILED at 10: the hunk's old lines are not in the file; the closest region is lines 10-16, where line 13 reads "XIII" and the diff has "13". Read those lines and send a diff of the current content",
      ]
    `);
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(
      THIRTY.replace("\n13\n", "\nXIII\n"),
    );
  });

  it("applies a multi-file diff with path '.', creating and deleting files, all or nothing", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    await writeFile(path.join(root, "old.txt"), "gone\n");
    const diff = [
      "diff --git a/numbers.txt b/numbers.txt",
      TWO_HUNKS.replace("--- numbers.txt", "--- a/numbers.txt").replace(
        "+++ numbers.txt",
        "+++ b/numbers.txt",
      ),
      "diff --git a/src/new.txt b/src/new.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/src/new.txt",
      "@@ -0,0 +1,2 @@",
      "+hello",
      "+world",
      "diff --git a/old.txt b/old.txt",
      "deleted file mode 100644",
      "--- a/old.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-gone",
      "",
    ].join("\n");
    const tool = createApplyDiffTool(client);
    await expect(tool.execute({ path: "numbers.txt", diff })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining('pass path "."'),
    });
    // A conflict in one file keeps every file as it was.
    await writeFile(path.join(root, "old.txt"), "gone\nbut not forgotten\n");
    const refused = await tool.execute({ path: ".", diff });
    expect(refused.conflicts).toEqual([
      "Hunk #1 FAILED at 1 in old.txt: the diff deletes the file, but the file holds more than the diff removes; read it and send a diff of its whole content",
    ]);
    expect(await files(root)).toEqual(["numbers.txt", "old.txt"]);
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(THIRTY);

    await writeFile(path.join(root, "old.txt"), "gone\n");
    const output = await tool.execute({ path: ".", diff });
    expect(output.files).toEqual([
      { path: "numbers.txt", action: "modified" },
      { path: "src/new.txt", action: "created" },
      { path: "old.txt", action: "deleted" },
    ]);
    expect(tool.toModelOutput(output).output).toBe(
      "applied 4 hunk(s) (modified numbers.txt, created src/new.txt, deleted old.txt)",
    );
    expect(await readFile(path.join(root, "src/new.txt"), "utf8")).toBe("hello\nworld\n");
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(PATCHED);
    expect(await files(root)).toEqual(["numbers.txt", "src"]);
  });

  it("applies a reversed diff (git diff -R, git show -R) to the files it names", async () => {
    const { root, client } = await workspace();
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
        cwd: root,
        encoding: "utf8",
      });
    git("init", "-q");
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    await writeFile(path.join(root, "old.txt"), "gone\n");
    git("add", ".");
    git("commit", "-qm", "before");
    await writeFile(path.join(root, "numbers.txt"), PATCHED);
    await mkdir(path.join(root, "src"));
    await writeFile(path.join(root, "src/new.txt"), "hello\n");
    git("rm", "-q", "old.txt");
    git("add", ".");
    git("commit", "-qm", "after");
    // Undoes the last commit: `--- b/x` / `+++ a/x` headers, the created file deleted and back.
    const reversed = git("diff", "-R", "HEAD~1", "HEAD");
    expect(reversed).toContain("--- b/numbers.txt\n+++ a/numbers.txt");
    const tool = createApplyDiffTool(client);
    const output = await tool.execute({ path: ".", diff: reversed });
    expect(output.files).toEqual([
      { path: "numbers.txt", action: "modified" },
      { path: "old.txt", action: "created" },
      { path: "src/new.txt", action: "deleted" },
    ]);
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(THIRTY);
    expect(await readFile(path.join(root, "old.txt"), "utf8")).toBe("gone\n");
    expect(await files(root)).toEqual([".git", "numbers.txt", "old.txt", "src"]);
    expect(await readdir(path.join(root, "src"))).toEqual([]);

    // `git show -R` of one file, given that file's path, on the tree of the last commit.
    git("checkout", "-qf", "HEAD");
    const shown = git("show", "-R", "HEAD", "--", "numbers.txt");
    expect(shown).toContain("--- b/numbers.txt\n+++ a/numbers.txt");
    await tool.execute({ path: "numbers.txt", diff: shown });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(THIRTY);
  });

  it("refuses diffs without hunks, missing files and escaping paths", async () => {
    const { root, client } = await workspace();
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const tool = createApplyDiffTool(client);
    for (const diff of ["", "replace line 5 with five", "--- a\n+++ b\n-5\n+five\n"]) {
      await expect(tool.execute({ path: "numbers.txt", diff })).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("@@ -12,4 +12,5 @@"),
      });
    }
    await expect(tool.execute({ path: "missing.txt", diff: TWO_HUNKS })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("write_file"),
    });
    await expect(tool.execute({ path: "../numbers.txt", diff: TWO_HUNKS })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    const escaping = TWO_HUNKS.replaceAll("numbers.txt", "../numbers.txt");
    await expect(tool.execute({ path: ".", diff: escaping })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(THIRTY);
  });

  it("is refused by a read-only sandbox and leaves the file alone", async () => {
    const { root, client } = await workspace("read-only");
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    await expect(
      createApplyDiffTool(client).execute({ path: "numbers.txt", diff: TWO_HUNKS }),
    ).rejects.toMatchObject({ code: "READ_ONLY" });
    expect(await readFile(path.join(root, "numbers.txt"), "utf8")).toBe(THIRTY);
  });
  it("says which limit refused a large file and how to change it anyway", async () => {
    const root = await useTempDir("pleach-apply-diff-");
    await writeFile(path.join(root, "numbers.txt"), THIRTY);
    const client = await createLocalSandbox({ root, mode: "workspace-write", maxFileBytes: 16 });
    for (const engine of ["pleach", "patch"] as const) {
      await expect(
        createApplyDiffTool(client).execute({ path: "numbers.txt", diff: TWO_HUNKS, engine }),
      ).rejects.toMatchObject({
        code: "TOO_LARGE",
        message: expect.stringMatching(
          /^numbers\.txt has 81 bytes, more than the 16 this sandbox reads\. apply_diff cannot change a file over that limit: .*`patch <file> < fix\.diff`/,
        ),
      });
    }
  });
});
