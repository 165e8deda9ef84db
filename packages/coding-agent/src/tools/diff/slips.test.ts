import { describe, expect, it } from "vitest";
import { applyFilePatch } from "./apply.js";
import { parseUnifiedDiff } from "./parse.js";

/** Apply a one-file diff to `text`. */
function apply(text: string, diff: string) {
  const [patch] = parseUnifiedDiff(diff);
  if (patch === undefined) throw new Error("no hunks");
  return applyFilePatch(text, patch);
}

const lines = (...rows: string[]) => `${rows.join("\n")}\n`;

const SOURCE = lines(
  "import { readFile } from 'node:fs/promises';",
  "",
  "export async function loadSettings(path) {",
  "  const text = await readFile(path, 'utf8');",
  "  const settings = JSON.parse(text);",
  "  validateSettings(settings);",
  "  return settings;",
  "}",
);

describe("applyFilePatch with a model's slips", () => {
  it("takes a context line with a one-letter typo, and says which line", () => {
    const result = apply(
      SOURCE,
      lines(
        "@@ -3,5 +3,5 @@",
        " export async function loadSettings(path) {",
        "   const text = await readFile(path, 'utf8');",
        "-  const settings = JSON.parse(text);",
        "+  const settings = JSON.parse(text, reviver);",
        "   validateSetings(settings);",
        "   return settings;",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.text).toBe(SOURCE.replace("JSON.parse(text)", "JSON.parse(text, reviver)"));
    expect(result.hunks).toEqual([
      { hunk: 1, status: "applied", line: 3, offset: 0, tolerance: "exact", similarLines: [6] },
    ]);
  });

  it("takes a removed line with a one-letter typo and removes the file's line", () => {
    const result = apply(
      SOURCE,
      lines(
        "@@ -4,3 +4,3 @@",
        "   const text = await readFile(path, 'utf8');",
        "-  const settings = JSON.parse(test);",
        "+  const settings = parse(text);",
        "   validateSettings(settings);",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.text).toBe(SOURCE.replace("JSON.parse(text)", "parse(text)"));
    expect(result.hunks[0]?.similarLines).toEqual([5]);
  });

  it("takes a typo where the hunk's last context line also matches further down", () => {
    const text = lines(
      "/**",
      " * Describe it.",
      " *",
      " * @param value - The value to check",
      " *",
      " * @returns Whether it is",
      " *",
      " */",
    );
    const result = apply(
      text,
      lines(
        "@@ -2,4 +2,3 @@",
        "  * Describe it.",
        "  *",
        "- * @param valve - The value to check",
        "  *",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.hunks[0]).toMatchObject({ status: "applied", similarLines: [4] });
    expect(result.text).toBe(text.replace(" * @param value - The value to check\n", ""));
  });

  it("never takes a typo in a short line, where it is as likely another line", () => {
    const text = lines("a();", "if (x) {", "  b();", "}", "c();");
    const result = apply(text, lines("@@ -2,3 +2,3 @@", " if (y) {", "-  b();", "+  d();", " }"));
    expect(result.conflicts).toHaveLength(1);
    expect(result.text).toBe(text);
  });

  it("refuses a typo that leaves two places equally likely", () => {
    const text = lines(
      "const first = computeValue(1);",
      "use(first);",
      "const second = computeValue(2);",
      "use(second);",
    );
    const result = apply(
      text,
      lines("@@ -1,2 +1,2 @@", " const thing = computeValue(3);", "-use(first);", "+use(third);"),
    );
    expect(result.conflicts).toHaveLength(1);
    expect(result.text).toBe(text);
  });

  it("takes a context line the diff left out, keeps it, and says which line", () => {
    const result = apply(
      SOURCE,
      lines(
        "@@ -3,5 +3,5 @@",
        " export async function loadSettings(path) {",
        "-  const settings = JSON.parse(text);",
        "+  const settings = JSON.parse(text) ?? {};",
        "   validateSettings(settings);",
        "   return settings;",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.text).toBe(SOURCE.replace("JSON.parse(text)", "JSON.parse(text) ?? {}"));
    expect(result.hunks[0]).toMatchObject({ status: "applied", line: 3, missingLines: [4] });
  });

  it("refuses a context line left out where the added lines could go before or after it", () => {
    const result = apply(
      SOURCE,
      lines(
        "@@ -4,4 +4,4 @@",
        "   const text = await readFile(path, 'utf8');",
        "-  const settings = JSON.parse(text);",
        "+  const settings = JSON.parse(text) ?? {};",
        "   return settings;",
        " }",
      ),
    );
    expect(result.conflicts).toHaveLength(1);
    expect(result.text).toBe(SOURCE);
  });

  it("applies a diff made before the file changed elsewhere", () => {
    const changed = `// A header added since.\n// Another line.\n${SOURCE}`;
    const result = apply(
      changed,
      lines(
        "@@ -6,2 +6,2 @@",
        "   validateSettings(settings);",
        "-  return settings;",
        "+  return Object.freeze(settings);",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.text).toBe(
      changed.replace("return settings;", "return Object.freeze(settings);"),
    );
    expect(result.hunks[0]).toMatchObject({ line: 8, offset: 2, tolerance: "exact" });
  });
});

describe("applyFilePatch where a left-out context line could mislead", () => {
  it("removes lines at the end of a hunk whose context misses a line, not 'already applied'", () => {
    const text = lines("function f() {", "  return result;", "};", "exports.f = f;");
    const result = apply(text, lines("@@ -2,3 +2,2 @@", "   return result;", "-exports.f = f;"));
    expect(result.conflicts).toEqual([]);
    expect(result.hunks[0]).toMatchObject({ status: "applied", missingLines: [3] });
    expect(result.text).toBe(lines("function f() {", "  return result;", "};"));
  });

  it("refuses when leaving outer context out finds another place than lining all lines up", () => {
    const block = ["const second = prepareSecond();", "const third = prepareThird();"];
    const tail = ["const fourth = prepareFourth();", "const fifth = prepareFifth();"];
    const text = lines(
      "const first = prepareFirst();",
      ...block,
      "const extra = prepareExtra();",
      ...tail,
      "function unrelated() {}",
      ...block,
      ...tail,
    );
    const result = apply(
      text,
      lines(
        "@@ -1,5 +1,5 @@",
        " const first = prepareFirst();",
        " const second = prepareSecond();",
        "-const third = prepareThird();",
        "+const third = prepareThird(2);",
        " const fourth = prepareFourth();",
        " const fifth = prepareFifth();",
      ),
    );
    expect(result.conflicts).toEqual([
      expect.stringContaining("the hunk's old lines match at lines 1 and 7"),
    ]);
    expect(result.text).toBe(text);
  });
});

describe("applyFilePatch when the diff's indentation style is not the file's", () => {
  const spaces = lines("function f(a) {", "  if (a) {", "    return 1;", "  }", "  return 2;", "}");

  it("re-indents added lines of a tab-indented diff to the file's two spaces, depth kept", () => {
    const result = apply(
      spaces,
      lines(
        "@@ -2,4 +2,7 @@",
        " \tif (a) {",
        "-\t\treturn 1;",
        "+\t\tif (a > 1) {",
        "+\t\t\treturn 1;",
        "+\t\t}",
        "+\t\treturn 0;",
        " \t}",
        " \treturn 2;",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.hunks[0]?.tolerance).toBe("indentation");
    expect(result.text).toBe(
      lines(
        "function f(a) {",
        "  if (a) {",
        "    if (a > 1) {",
        "      return 1;",
        "    }",
        "    return 0;",
        "  }",
        "  return 2;",
        "}",
      ),
    );
  });

  it("re-indents a space-indented diff to a tab-indented file", () => {
    const tabs = spaces.replace(/^( +)/gm, (indent) => "\t".repeat(indent.length / 2));
    const result = apply(
      tabs,
      lines(
        "@@ -2,3 +2,4 @@",
        "     if (a) {",
        "-        return 1;",
        "+        log(a);",
        "+        return 1;",
        "     }",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.text).toBe(tabs.replace("\t\treturn 1;", "\t\tlog(a);\n\t\treturn 1;"));
  });

  it("gives tab-indented added lines the file's spaces when the diff's context is in tabs", () => {
    const file = lines(
      "/**",
      " * Options.",
      " */",
      "export interface Options {}",
      ...spaces.split("\n"),
    );
    const result = apply(
      file,
      lines(
        "@@ -3,2 +3,3 @@",
        "  */",
        "-export interface Options {}",
        "+export interface Options",
        "+\textends Base {}",
        "@@ -6,3 +7,3 @@",
        " \tif (a) {",
        "-\t\treturn 1;",
        "+\t\treturn 3;",
        " \t}",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.hunks.map((hunk) => hunk.tolerance)).toEqual(["indentation", "indentation"]);
    expect(result.text).toBe(
      file
        .replace("export interface Options {}", "export interface Options\n  extends Base {}")
        .replace("return 1;", "return 3;"),
    );
  });

  it("keeps a hunk's own indentation change when re-indenting it", () => {
    const result = apply(
      spaces,
      lines("@@ -4,3 +4,3 @@", " \t}", "-\treturn 2;", "+\t\treturn 2;", " }"),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.text).toBe(spaces.replace("  return 2;", "    return 2;"));
  });
});

describe("applyFilePatch on a hunk that only changes indentation", () => {
  const file = lines(
    "function run(items) {",
    "  start();",
    "      process(items);",
    "  finish();",
    "}",
  );

  it("applies it, typo and all, instead of calling it already applied", () => {
    const result = apply(
      file,
      lines(
        "@@ -1,4 +1,4 @@",
        " function run(items) {",
        "   start();",
        "-      proces(items);",
        "+  process(items);",
        "   finish();",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.hunks[0]).toMatchObject({ status: "applied", similarLines: [3] });
    expect(result.text).toBe(file.replace("      process", "  process"));
  });

  it("applies a change of trailing whitespace, typo and all, instead of calling it applied", () => {
    const text = lines("// Format the result", "const value = compute(input); ", "print(value);");
    const result = apply(
      text,
      lines(
        "@@ -1,3 +1,3 @@",
        " // Format the result",
        "-const valve = compute(input); ",
        "+const value = compute(input);",
        " print(value);",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.hunks[0]).toMatchObject({ status: "applied", similarLines: [2] });
    expect(result.text).toBe(text.replace("(input); ", "(input);"));
  });

  it("applies it when the context is indented otherwise, keeping the change", () => {
    const deeper = file.replace(/^ {2}/gm, "    ");
    const result = apply(
      deeper,
      lines(
        "@@ -1,4 +1,4 @@",
        " function run(items) {",
        "   start();",
        "-      process(items);",
        "+  process(items);",
        "   finish();",
      ),
    );
    expect(result.conflicts).toEqual([]);
    expect(result.text).toBe(deeper.replace("        process", "    process"));
  });
});
