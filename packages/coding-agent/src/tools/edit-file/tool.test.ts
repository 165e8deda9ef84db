import { readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { type SandboxMode, ToolError } from "@pleach/core";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { createEditFileTool } from "./tool.js";

async function setup(mode: SandboxMode = "workspace-write") {
  const temp = await useTempDir();
  const client = await createLocalSandbox({ root: temp, mode });
  const file = (name: string) => path.join(temp, name);
  return {
    root: temp,
    tool: createEditFileTool(client),
    put: (name: string, content: string | Uint8Array) => writeFile(file(name), content),
    bytes: (name: string) => readFile(file(name)),
    text: (name: string) => readFile(file(name), "utf8"),
  };
}

/** The message of the ToolError `promise` rejects with, after checking its code. */
async function refusal(promise: Promise<unknown>, code: string): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ToolError);
  expect((error as ToolError).code).toBe(code);
  return (error as ToolError).message;
}

const SOURCE = [
  "export function total(items) {",
  "  let sum = 0;",
  "  for (const item of items) {",
  "    sum += item.price * item.quantity;",
  "  }",
  "  return sum;",
  "}",
  "",
  "export function count(items) {",
  "  return items.length;",
  "}",
  "",
].join("\n");

describe("edit_file", () => {
  it("says which limit refused a large file and how to change it anyway", async () => {
    const root = await useTempDir("pleach-edit-");
    await writeFile(path.join(root, "big.txt"), "x".repeat(100));
    const client = await createLocalSandbox({ root, mode: "workspace-write", maxFileBytes: 16 });
    await expect(
      createEditFileTool(client).execute({ path: "big.txt", old: "x", new: "y" }),
    ).rejects.toMatchObject({
      code: "TOO_LARGE",
      message: expect.stringMatching(
        /^big\.txt has 100 bytes, more than the 16 this sandbox reads\. edit_file cannot change a file over that limit: change it with a command through bash instead/,
      ),
      details: { bytes: 100, maxBytes: 16 },
    });
  });

  it("replaces the one match and keeps every other byte: BOM, CRLF, no final newline", async () => {
    const { tool, put, bytes } = await setup();
    const original = "\uFEFFalpha\r\nbeta\r\ngamma ✓\r\ndelta";
    await put("win.txt", original);
    const output = await tool.execute({ path: "win.txt", old: "gamma ✓", new: "GAMMA 🎉" });
    expect(output).toEqual({
      path: "win.txt",
      action: "edited",
      replacements: 1,
      firstChangedLine: 3,
    });
    expect(await bytes("win.txt")).toEqual(
      Buffer.from("\uFEFFalpha\r\nbeta\r\nGAMMA 🎉\r\ndelta", "utf8"),
    );
    expect(tool.toModelOutput(output)).toEqual({
      output: "edited win.txt (1 replacement at line 3)",
      error: false,
    });
  });

  it("creates or overwrites the whole file when `old` is empty", async () => {
    const { tool, text } = await setup();
    const created = await tool.execute({ path: "new/dir/a.txt", old: "", new: "one\n" });
    expect(created).toMatchObject({ action: "wrote", replacements: 0 });
    expect(tool.toModelOutput(created).output).toBe("wrote new/dir/a.txt");
    expect(await text("new/dir/a.txt")).toBe("one\n");
    await tool.execute({ path: "new/dir/a.txt", old: "", new: "two" });
    expect(await text("new/dir/a.txt")).toBe("two");
  });

  it("refuses an `old` that is not there, quoting the closest region", async () => {
    const { tool, put, text } = await setup();
    await put("cart.js", SOURCE);
    const message = await refusal(
      tool.execute({
        path: "cart.js",
        old: "  for (const item of items) {\n    sum += item.cost * item.quantity;\n  }",
        new: "  for (const item of items) sum += item.total;",
      }),
      "NO_MATCH",
    );
    expect(message).toMatchInlineSnapshot(`
      "\`old\` was not found in cart.js. The closest region is lines 3-5 (94% similar):
      3	  for (const item of items) {
      4	    sum += item.price * item.quantity;
      5	  }
      First difference, line 4:
        file: "    sum += item.price * item.quantity;"
        old:  "    sum += item.cost * item.quantity;"
      Read the file (read_file with offset 3) and copy the text to replace exactly.
      Nothing was changed."
    `);
    expect(await text("cart.js")).toBe(SOURCE);
  });

  it("says when `old` differs only in whitespace", async () => {
    const { tool, put } = await setup();
    await put("cart.js", SOURCE);
    const message = await refusal(
      tool.execute({
        path: "cart.js",
        old: "let sum = 0;\nfor (const item of items) {",
        new: "x",
        tolerant: false,
      }),
      "NO_MATCH",
    );
    expect(message).toMatchInlineSnapshot(`
      "\`old\` was not found in cart.js. It differs from lines 2-3 only in whitespace (indentation, spaces, tabs or line breaks):
      2	  let sum = 0;
      3	  for (const item of items) {
      Copy those lines exactly, with their whitespace, into \`old\`.
      It matches lines 2-3 uniquely if indentation and other whitespace are ignored: copy those lines exactly, or pass \`tolerant: true\` to replace them.
      Nothing was changed."
    `);
  });

  it("says when `old` has LF line endings and the file CRLF, and does not apply it", async () => {
    const { tool, put, bytes } = await setup();
    const crlf = SOURCE.replaceAll("\n", "\r\n");
    await put("cart.js", crlf);
    const message = await refusal(
      tool.execute({
        path: "cart.js",
        old: "  }\n  return sum;\n",
        new: "  }\n  return 0;\n",
        tolerant: false,
      }),
      "NO_MATCH",
    );
    expect(message).toMatchInlineSnapshot(`
      "\`old\` was not found in cart.js. It matches lines 5-6 except for line endings: the file uses CRLF (\\r\\n), \`old\` uses LF (\\n).
      5	  }
      6	  return sum;
      Send \`old\` (and \`new\`) with the file's line endings; the edit is not applied with different ones.
      It matches lines 5-6 uniquely if line endings (\\r\\n against \\n) are ignored: copy those lines exactly, or pass \`tolerant: true\` to replace them.
      Nothing was changed."
    `);
    expect(await bytes("cart.js")).toEqual(Buffer.from(crlf));
    // With the file's own line endings the same edit applies.
    await tool.execute({
      path: "cart.js",
      old: "  }\r\n  return sum;\r\n",
      new: "  }\r\n  return 0;\r\n",
    });
    expect((await bytes("cart.js")).toString()).toContain("  return 0;\r\n}\r\n");
  });

  it("says when `old` has CRLF line endings and the file LF", async () => {
    const { tool, put, text } = await setup();
    await put("cart.js", SOURCE);
    const message = await refusal(
      tool.execute({
        path: "cart.js",
        old: "export function count(items) {\r\n",
        new: "",
        tolerant: false,
      }),
      "NO_MATCH",
    );
    expect(message.split("\n")[0]).toMatchInlineSnapshot(
      `"\`old\` was not found in cart.js. It matches line 9 except for line endings: the file uses LF (\\n), \`old\` uses CRLF (\\r\\n)."`,
    );
    expect(await text("cart.js")).toBe(SOURCE);
  });

  it("applies a unique tolerant match (the default; `tolerant: false` keeps exact), and says so", async () => {
    const { tool, put, bytes } = await setup();
    const crlf = SOURCE.replaceAll("\n", "\r\n");
    await put("cart.js", crlf);
    const output = await tool.execute({
      path: "cart.js",
      old: "  }\n  return sum;\n",
      new: "  }\n  return sum * 2;\n",
      tolerant: true,
    });
    expect(output.tolerances).toEqual([
      {
        edit: 0,
        tolerance: "line-endings",
        startLine: 5,
        endLine: 6,
        how: "if line endings (\\r\\n against \\n) are ignored",
      },
    ]);
    expect(tool.toModelOutput(output).output).toMatchInlineSnapshot(`
      "edited cart.js (1 replacement at line 5)
      \`old\` was not found exactly; it matched lines 5-6 if line endings (\\r\\n against \\n) are ignored, and was replaced there."
    `);
    expect(await bytes("cart.js")).toEqual(
      Buffer.from(crlf.replace("return sum;", "return sum * 2;")),
    );
    // Indentation: the replacement takes the file's indentation.
    await put("b.py", "def f():\n    if x:\n        return 1\n    return 2\n");
    await tool.execute({
      path: "b.py",
      old: "if x:\n    return 1",
      new: "if x:\n    return 10",
      tolerant: true,
    });
    expect((await bytes("b.py")).toString()).toBe(
      "def f():\n    if x:\n        return 10\n    return 2\n",
    );
    // Slips a model makes, where the rest of `old` pins the place: a line remembered from an
    // older version and a typo; the lines `old` and `new` share keep the file's text.
    await put(
      "d.py",
      "def load(path):\n    with open(path) as handle:\n        text = handle.read()\n    return parse(text)\n",
    );
    const slipped = await tool.execute({
      path: "d.py",
      old: "def load(path):\n    with open(path) as hnadle:\n        text = handle.read()\n    return parse(text)\n",
      new: "def load(path):\n    with open(path) as hnadle:\n        text = handle.read()\n    return parse(text, strict=True)\n",
      tolerant: true,
    });
    expect((await bytes("d.py")).toString()).toBe(
      "def load(path):\n    with open(path) as handle:\n        text = handle.read()\n    return parse(text, strict=True)\n",
    );
    expect(tool.toModelOutput(slipped).output).toMatchInlineSnapshot(`
      "edited d.py (1 replacement at line 4)
      \`old\` was not found exactly; it matched line 4 with tolerances: 2 outer context line(s) not matched, and was replaced there."
    `);
    // Several tolerant matches: refused, with the lines.
    await put("c.txt", "a  \nb\na\nb \n");
    const message = await refusal(
      tool.execute({ path: "c.txt", old: "a\nb\n", new: "x\n", tolerant: true }),
      "NO_MATCH",
    );
    expect(message.split("\n").at(-2)).toMatchInlineSnapshot(
      `"Even with tolerances, it matches several places (starting at lines 1, 3)."`,
    );
  });

  it("says when nothing in the file resembles `old`", async () => {
    const { tool, put } = await setup();
    await put("cart.js", SOURCE);
    const message = await refusal(
      tool.execute({ path: "cart.js", old: "@@@@", new: "x" }),
      "NO_MATCH",
    );
    expect(message).toMatchInlineSnapshot(`
      "\`old\` was not found in cart.js. Nothing in the file resembles it. Read the file with read_file and copy the text to replace exactly.
      Nothing was changed."
    `);
  });

  it("refuses an ambiguous `old`, listing the lines, and changes nothing", async () => {
    const { tool, put, text } = await setup();
    await put("cart.js", SOURCE);
    const message = await refusal(
      tool.execute({ path: "cart.js", old: "(items) {", new: "(items = []) {" }),
      "AMBIGUOUS_MATCH",
    );
    expect(message).toMatchInlineSnapshot(`
      "\`old\` occurs 2 times in cart.js, starting at lines 1, 9; it must occur exactly once. Add surrounding lines to \`old\` (from just before or after the place you mean) so that it matches only there.
      Nothing was changed."
    `);
    expect(await text("cart.js")).toBe(SOURCE);
    // Overlapping occurrences count: "aa" occurs twice in "aaa".
    await put("a.txt", "aaa");
    await refusal(tool.execute({ path: "a.txt", old: "aa", new: "b" }), "AMBIGUOUS_MATCH");
  });

  it("applies several edits against the original text, all or nothing", async () => {
    const { tool, put, text } = await setup();
    await put("cart.js", SOURCE);
    const output = await tool.execute({
      path: "cart.js",
      edits: [
        { old: "return items.length;", new: "return items.length + 0;" },
        { old: "let sum = 0;", new: "let sum = 0; // total" },
        // Matches the original text even though the edit above changes the same line's neighbour.
        { old: "function total(items)", new: "function sumOf(items)" },
      ],
    });
    expect(output).toEqual({
      path: "cart.js",
      action: "edited",
      replacements: 3,
      firstChangedLine: 1,
    });
    expect(tool.toModelOutput(output).output).toBe(
      "edited cart.js (3 replacements, the first at line 1)",
    );
    const edited = await text("cart.js");
    expect(edited).toBe(
      SOURCE.replace("return items.length;", "return items.length + 0;")
        .replace("let sum = 0;", "let sum = 0; // total")
        .replace("function total(items)", "function sumOf(items)"),
    );

    const failed = await refusal(
      tool.execute({
        path: "cart.js",
        edits: [
          { old: "let sum = 0; // total", new: "let sum = 1;" },
          { old: "return sum;", new: "return sum * 2;" },
          { old: "(items) {", new: "(list) {" },
        ],
      }),
      "AMBIGUOUS_MATCH",
    );
    expect(failed).toMatchInlineSnapshot(`
      "edits[2]: \`old\` occurs 2 times in cart.js, starting at lines 1, 9; it must occur exactly once. Add surrounding lines to \`old\` (from just before or after the place you mean) so that it matches only there.
      No edit was applied; the file is unchanged."
    `);
    expect(await text("cart.js")).toBe(edited);
  });

  it("refuses overlapping edits with CONFLICT and writes nothing", async () => {
    const { tool, put, text } = await setup();
    await put("cart.js", SOURCE);
    const message = await refusal(
      tool.execute({
        path: "cart.js",
        edits: [
          { old: "  return sum;\n}", new: "  return 0;\n}" },
          { old: "let sum = 0;", new: "let sum = 1;" },
          { old: "}\n\nexport function count", new: "}\n\nfunction count" },
        ],
      }),
      "CONFLICT",
    );
    expect(message).toMatchInlineSnapshot(`
      "edits[0] (lines 6-7) and edits[2] (lines 7-9) overlap; each edit must change a separate part of the file. Merge them into one edit.
      No edit was applied; the file is unchanged."
    `);
    expect(await text("cart.js")).toBe(SOURCE);
  });

  it("refuses no-op and malformed input as INVALID_INPUT", async () => {
    const { tool, put, text } = await setup();
    await put("a.txt", "a\n");
    const identical = await refusal(
      tool.execute({ path: "a.txt", old: "a", new: "a" }),
      "INVALID_INPUT",
    );
    expect(identical).toMatchInlineSnapshot(`
      "edit_file got invalid input:
      - new: \`old\` and \`new\` are identical; the edit would change nothing"
    `);
    for (const input of [
      { path: "a.txt", old: "a" },
      { path: "a.txt", new: "b" },
      { path: "a.txt", old: 1, new: "b" },
      { path: "a.txt", old: "a", new: "b", edits: [{ old: "a", new: "b" }] },
      { path: "a.txt", edits: [] },
      { path: "a.txt", edits: [{ old: "", new: "b" }] },
      { path: "a.txt", edits: [{ old: "a", new: "a" }] },
      { path: "a.txt", edits: [{ old: "a", new: "b", extra: 1 }] },
      { path: ["a.txt"], old: "a", new: "b" },
      { path: "a.txt", old: "a", new: "b", replaceAll: true },
    ]) {
      await expect(tool.execute(input)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    }
    expect(await text("a.txt")).toBe("a\n");
  });

  it("refuses to edit binary files and names missing ones with a way to create them", async () => {
    const { tool, put, bytes } = await setup();
    const binary = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]);
    await put("program", binary);
    expect(
      await refusal(tool.execute({ path: "program", old: "ELF", new: "FLE" }), "BINARY_FILE"),
    ).toMatchInlineSnapshot(
      `"program is not UTF-8 text (a NUL byte at byte 4), so edit_file cannot change it without corrupting it. Replace it whole with write_file and encoding "base64"."`,
    );
    expect(await bytes("program")).toEqual(binary);
    expect(
      await refusal(tool.execute({ path: "missing.txt", old: "a", new: "b" }), "NOT_FOUND"),
    ).toMatchInlineSnapshot(
      `"no such file or folder: missing.txt. To create the file, call edit_file with an empty \`old\` (or use write_file)."`,
    );
  });

  it("refuses paths that leave the workspace and edits in a read-only sandbox", async () => {
    const { root, tool } = await setup();
    const outside = await useTempDir("pleach-outside-");
    await writeFile(path.join(outside, "target.txt"), "secret\n");
    await symlink(path.join(outside, "target.txt"), path.join(root, "link.txt"));
    for (const escaping of ["../target.txt", "/etc/passwd", "link.txt"]) {
      await refusal(tool.execute({ path: escaping, old: "secret", new: "pwned" }), "PATH_ESCAPE");
      await refusal(tool.execute({ path: escaping, old: "", new: "pwned" }), "PATH_ESCAPE");
    }
    expect(await readFile(path.join(outside, "target.txt"), "utf8")).toBe("secret\n");

    const readOnly = await setup("read-only");
    await readOnly.put("a.txt", "a\n");
    await refusal(readOnly.tool.execute({ path: "a.txt", old: "a", new: "b" }), "READ_ONLY");
    await refusal(readOnly.tool.execute({ path: "b.txt", old: "", new: "b" }), "READ_ONLY");
    expect(await readdir(readOnly.root)).toEqual(["a.txt"]);
  });

  it("finds the closest region of a 200,000-line file within its comparison budget", async () => {
    const { tool, put, text } = await setup();
    const lines = Array.from(
      { length: 200_000 },
      (_, index) => `row ${index + 1}: value = ${index * 7}`,
    );
    const original = `${lines.join("\n")}\n`;
    await put("big.txt", original);
    const error = await tool
      .execute({
        path: "big.txt",
        old: "row 150000: value = 1049993\nrow 150001: value = 1050000\nrow 150002: value = 0\n",
        new: "x",
      })
      .catch((reason: unknown) => reason as ToolError);
    expect(error).toMatchObject({
      code: "NO_MATCH",
      details: { closest: { startLine: 150_000, endLine: 150_002, difference: "similar" } },
    });
    // An edit of the last line works and keeps the other 199,999 lines.
    await tool.execute({ path: "big.txt", old: "row 200000: value = 1399993\n", new: "end\n" });
    expect(await text("big.txt")).toBe(`${lines.slice(0, -1).join("\n")}\nend\n`);
  });
});
