import path from "node:path";
import { describe, expect, it } from "vitest";
import { localWorkspace } from "../../test-support/local-workspace.js";
import { createEditFileTool } from "../edit-file/tool.js";
import { parserFor, type SyntaxLanguage, syntaxLanguageOf } from "./grammars.js";

interface LanguageCase {
  language: SyntaxLanguage;
  file: string;
  /** A file that parses. */
  valid: string;
  /** An edit that breaks it, and the line of the error it makes. */
  breaking: { old: string; new: string; line: number };
  /** An edit elsewhere that keeps it as it parses. */
  elsewhere: { old: string; new: string };
}

const CASES: LanguageCase[] = [
  {
    language: "typescript",
    file: "src/total.ts",
    valid: [
      "export function total(items: number[]): number {",
      "  let sum = 0;",
      "  for (const item of items) {",
      "    sum += item;",
      "  }",
      "  return sum;",
      "}",
      "",
      'export const label = "total";',
      "",
    ].join("\n"),
    breaking: { old: "    sum += item;", new: "    sum += (item;", line: 4 },
    elsewhere: { old: '"total"', new: '"sum"' },
  },
  {
    language: "javascript",
    file: "src/total.mjs",
    valid: [
      "export function total(items) {",
      "  let sum = 0;",
      "  for (const item of items) {",
      "    sum += item;",
      "  }",
      "  return sum;",
      "}",
      "",
      'export const label = "total";',
      "",
    ].join("\n"),
    breaking: {
      old: "  for (const item of items) {",
      new: "  for (const item of items {",
      line: 3,
    },
    elsewhere: { old: '"total"', new: '"sum"' },
  },
  {
    language: "tsx",
    file: "src/label.tsx",
    valid: [
      'import { label } from "./total";',
      "",
      "export function Label(): JSX.Element {",
      '  return <span className="label">{label}</span>;',
      "}",
      "",
      "export const title: string = label;",
      "",
    ].join("\n"),
    breaking: { old: "{label}</span>", new: "{label</span>", line: 4 },
    elsewhere: { old: "title: string", new: "heading: string" },
  },
  {
    language: "json",
    file: "package.json",
    valid: ["{", '  "name": "total",', '  "version": "1.0.0",', '  "private": true', "}", ""].join(
      "\n",
    ),
    breaking: { old: '"private": true', new: '"private": true,', line: 4 },
    elsewhere: { old: '"total"', new: '"sum"' },
  },
  {
    language: "python",
    file: "total.py",
    valid: [
      "def total(items):",
      "    s = 0",
      "    for item in items:",
      "        s += item",
      "    return s",
      "",
      "",
      'LABEL = "total"',
      "",
    ].join("\n"),
    breaking: { old: "    for item in items:", new: "    for item in items", line: 3 },
    elsewhere: { old: '"total"', new: '"sum"' },
  },
  {
    language: "go",
    file: "total.go",
    valid: [
      "package total",
      "",
      "func Total(items []int) int {",
      "\ts := 0",
      "\tfor _, item := range items {",
      "\t\ts += item",
      "\t}",
      "\treturn s",
      "}",
      "",
      'const Label = "total"',
      "",
    ].join("\n"),
    breaking: { old: "\t\ts += item", new: "\t\ts += (item", line: 6 },
    elsewhere: { old: '"total"', new: '"sum"' },
  },
  {
    language: "rust",
    file: "src/total.rs",
    valid: [
      "pub fn total(items: &[i32]) -> i32 {",
      "    let mut s = 0;",
      "    for item in items {",
      "        s += item;",
      "    }",
      "    s",
      "}",
      "",
      'pub const LABEL: &str = "total";',
      "",
    ].join("\n"),
    breaking: { old: "        s += item;", new: "        s += (item;", line: 4 },
    elsewhere: { old: '"total"', new: '"sum"' },
  },
  {
    language: "css",
    file: "style.css",
    valid: [".total {", "  color: red;", "}", "", ".label {", "  margin: 0;", "}", ""].join("\n"),
    breaking: { old: "  color: red;", new: "  color: red;)", line: 2 },
    elsewhere: { old: "margin: 0", new: "margin: 1px" },
  },
  {
    language: "html",
    file: "index.html",
    valid: [
      "<!DOCTYPE html>",
      "<html>",
      "  <body>",
      '    <p class="total">Total</p>',
      '    <p class="label">Label</p>',
      "  </body>",
      "</html>",
      "",
    ].join("\n"),
    breaking: { old: "Total</p>", new: "Total</p", line: 4 },
    elsewhere: { old: ">Label<", new: ">Sum<" },
  },
  {
    language: "yaml",
    file: "config.yml",
    valid: ["name: total", "items:", "  - one", "  - two", "label: total", ""].join("\n"),
    breaking: { old: "  - two", new: "  - [two", line: 4 },
    elsewhere: { old: "label: total", new: "label: sum" },
  },
];

async function setup() {
  const workspace = await localWorkspace();
  return { ...workspace, tool: createEditFileTool(workspace.client) };
}

function broken(language: LanguageCase): string {
  return language.valid.replace(language.breaking.old, language.breaking.new);
}

describe("syntax diagnostics per language", () => {
  it("covers the ten languages, each grammar loading (a grammar that fails to load fails here)", async () => {
    expect(CASES.map(({ language }) => language)).toEqual([
      "typescript",
      "javascript",
      "tsx",
      "json",
      "python",
      "go",
      "rust",
      "css",
      "html",
      "yaml",
    ]);
    for (const { language, file } of CASES) {
      expect(syntaxLanguageOf(file)).toBe(language);
      expect({ language, loaded: (await parserFor(language)) !== undefined }).toEqual({
        language,
        loaded: true,
      });
    }
  });

  describe.each(CASES)("$language ($file)", (language) => {
    it("reports the line of an error the edit makes", async () => {
      const { tool, put } = await setup();
      await put(path.basename(language.file), language.valid);
      const { old, new: replacement, line } = language.breaking;
      const output = await tool.execute({
        path: path.basename(language.file),
        old,
        new: replacement,
      });
      expect(output.syntaxErrors).toEqual([
        {
          path: path.basename(language.file),
          count: 1,
          errors: [{ line, message: expect.any(String) }],
          edit: expect.any(Object),
        },
      ]);
      expect(tool.toModelOutput(output).output).toContain(
        `The edit left a syntax error in ${path.basename(language.file)} at line ${line} (`,
      );
    });

    it("reports nothing for an edit that fixes the file", async () => {
      const { tool, put } = await setup();
      const name = path.basename(language.file);
      await put(name, broken(language));
      const output = await tool.execute({
        path: name,
        old: language.breaking.new,
        new: language.breaking.old,
      });
      expect(output.syntaxErrors).toBeUndefined();
      expect(tool.toModelOutput(output).output).not.toContain("syntax error");
    });

    it("does not blame an edit of an already broken file for the error it had", async () => {
      const { tool, put } = await setup();
      const name = path.basename(language.file);
      await put(name, broken(language));
      const output = await tool.execute({ path: name, ...language.elsewhere });
      expect(output.syntaxErrors).toBeUndefined();
    });

    it("refuses the breaking edit with rejectSyntaxErrors, the file byte-identical", async () => {
      const { tool, put, bytes } = await setup();
      const name = path.basename(language.file);
      await put(name, language.valid);
      const before = await bytes(name);
      const { old, new: replacement, line } = language.breaking;
      await expect(
        tool.execute({ path: name, old, new: replacement, rejectSyntaxErrors: true }),
      ).rejects.toMatchObject({
        code: "SYNTAX_ERROR",
        message: expect.stringContaining(`a syntax error in ${name} at line ${line} (`),
      });
      expect((await bytes(name)).equals(before)).toBe(true);
    });
  });
});
