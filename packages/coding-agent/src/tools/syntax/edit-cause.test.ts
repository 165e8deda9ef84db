import { describe, expect, it } from "vitest";
import { localWorkspace } from "../../test-support/local-workspace.js";
import { createEditFileTool } from "../edit-file/tool.js";
import { editCause } from "./edit-cause.js";

const MODULE = [
  "export function total(items: number[]): number {",
  "  let sum = 0;",
  "  for (const item of items) {",
  "    sum += item;",
  "  }",
  "  return sum;",
  "}",
  "",
].join("\n");

describe("editCause", () => {
  it("names the lines an edit changed and the brackets it unbalanced", () => {
    expect(
      editCause(
        MODULE,
        MODULE.replace("    sum += item;\n  }\n", "    sum += item;\n"),
        "typescript",
      ),
    ).toEqual({
      startLine: 5,
      endLine: 5,
      changes: ['removed a "}", so the braces no longer balance'],
    });
    expect(
      editCause(MODULE, MODULE.replace("(const item", "(const item, (x"), "typescript")?.changes,
    ).toEqual(['added a "(", so the parentheses no longer balance']);
  });

  it("names an unclosed quote and an indentation change in Python", () => {
    const script = "def f(x):\n    if x:\n        return 1\n    return 2\n";
    expect(editCause(script, script.replace("return 1", 'return "1'), "python")?.changes).toEqual([
      'left 1 line with an odd number of " (a string not closed?)',
    ]);
    expect(
      editCause(script, script.replace("    return 2", "        return 2"), "python")?.changes,
    ).toEqual(["changed only the indentation, which moves lines into or out of a block"]);
    expect(editCause(script, script, "python")).toBeUndefined();
  });
});

describe("a syntax error after edit_file", () => {
  it("is reported with the edit's line and the brace it removed, beside where the parser noticed", async () => {
    const { client, put } = await localWorkspace();
    await put("total.ts", MODULE);
    const tool = createEditFileTool(client);
    const output = await tool.execute({
      path: "total.ts",
      old: "    sum += item;\n  }\n",
      new: "    sum += item;\n",
    });
    expect(output.syntaxErrors?.[0]?.edit).toEqual({
      startLine: 5,
      endLine: 5,
      changes: ['removed a "}", so the braces no longer balance'],
    });
    expect(tool.toModelOutput(output).output).toMatchInlineSnapshot(`
      "edited total.ts (1 replacement at line 4)
      The edit left a syntax error in total.ts at line 6 (missing "}", where the parser noticed it; the change at line 5 removed a "}", so the braces no longer balance); fix it before running the code."
    `);
  });
});
