import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { runAnthropicNativeToolUse, toAnthropicNativeTools } from "@pleach/core/anthropic";
import { runOpenAIApplyPatchCall, runOpenAIShellCall } from "@pleach/core/openai";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { createCodingAgentTools } from "./coding-agent-tools.js";

async function workspace() {
  const root = await useTempDir("pleach-native-");
  await writeFile(path.join(root, "app.py"), "def main():\n    print('hi')\n    print('hi')\n");
  await mkdir(path.join(root, "pkg"));
  await writeFile(path.join(root, "pkg", "util.py"), "x = 1\n");
  const client = await createLocalSandbox({ root, mode: "danger-full-access" });
  return { root, tools: createCodingAgentTools(client) };
}

/**
 * Anthropic's text editor (text_editor_20250728) over pleach's tools, against the semantics its
 * documentation gives: `view` numbers lines `N: `, `view_range` is 1-based with -1 for the end,
 * a folder lists its entries, `str_replace` needs exactly one match (with its two documented
 * errors), `insert_line` 0 is the top, and `create` makes a new file.
 */
const TABLE: Array<{
  name: string;
  input: Record<string, unknown>;
  output: string | RegExp;
  error: boolean;
  file?: [string, string];
}> = [
  {
    name: "view of a file shows its lines numbered",
    input: { command: "view", path: "app.py" },
    output: "1: def main():\n2:     print('hi')\n3:     print('hi')",
    error: false,
  },
  {
    name: "view_range shows lines start to end, 1-based",
    input: { command: "view", path: "app.py", view_range: [2, 3] },
    output: "2:     print('hi')\n3:     print('hi')",
    error: false,
  },
  {
    name: "view_range with -1 reads to the end",
    input: { command: "view", path: "app.py", view_range: [3, -1] },
    output: "3:     print('hi')",
    error: false,
  },
  {
    name: "view of a folder lists its entries",
    input: { command: "view", path: "pkg" },
    output: /util\.py/,
    error: false,
  },
  {
    name: "str_replace with no match",
    input: { command: "str_replace", path: "app.py", old_str: "print('bye')", new_str: "x" },
    output: "Error: No match found for replacement. Please check your text and try again.",
    error: true,
    file: ["app.py", "def main():\n    print('hi')\n    print('hi')\n"],
  },
  {
    name: "str_replace with several matches",
    input: { command: "str_replace", path: "app.py", old_str: "print('hi')", new_str: "x" },
    output:
      "Error: Found 2 matches for replacement text. Please provide more context to make a unique match.",
    error: true,
    file: ["app.py", "def main():\n    print('hi')\n    print('hi')\n"],
  },
  {
    name: "str_replace with one match",
    input: {
      command: "str_replace",
      path: "app.py",
      old_str: "def main():",
      new_str: "def run():",
    },
    output: "Successfully replaced text at exactly one location.",
    error: false,
    file: ["app.py", "def run():\n    print('hi')\n    print('hi')\n"],
  },
  {
    name: "insert at line 0 puts the text at the top",
    input: { command: "insert", path: "app.py", insert_line: 0, new_str: "import os" },
    output: "Successfully inserted text after line 0.",
    error: false,
    file: ["app.py", "import os\ndef main():\n    print('hi')\n    print('hi')\n"],
  },
  {
    name: "insert after the last line appends",
    input: { command: "insert", path: "app.py", insert_line: 3, new_str: "main()\n" },
    output: "Successfully inserted text after line 3.",
    error: false,
    file: ["app.py", "def main():\n    print('hi')\n    print('hi')\nmain()\n"],
  },
  {
    name: "insert past the end is refused with the valid range",
    input: { command: "insert", path: "app.py", insert_line: 9, new_str: "x" },
    output: /Invalid `insert_line` parameter: 9\. .*\[0, 3\]/,
    error: true,
  },
  {
    name: "create over an existing file is refused",
    input: { command: "create", path: "app.py", file_text: "new" },
    output:
      /^Error: File already exists at: app\.py\. Cannot overwrite files using command `create`/,
    error: true,
    file: ["app.py", "def main():\n    print('hi')\n    print('hi')\n"],
  },
  {
    name: "create makes a new file",
    input: { command: "create", path: "new/mod.py", file_text: "y = 2\n" },
    output: "File created successfully at: new/mod.py",
    error: false,
    file: ["new/mod.py", "y = 2\n"],
  },
  {
    name: "view of a missing file",
    input: { command: "view", path: "nope.py" },
    output: /^Error: File not found\./,
    error: true,
  },
  {
    name: "undo_edit is not in this version",
    input: { command: "undo_edit", path: "app.py" },
    output: /^Error: undo_edit is not a command of this text editor/,
    error: true,
  },
];

describe("Anthropic text editor over pleach's tools", () => {
  it("is offered with bash in place of the tools it runs", async () => {
    const { tools } = await workspace();
    const offered = toAnthropicNativeTools(tools).map((tool) =>
      "type" in tool && tool.type !== "custom" ? tool.type : tool.name,
    );
    expect(offered.slice(0, 2)).toEqual(["bash_20250124", "text_editor_20250728"]);
    for (const covered of ["bash", "read_file", "write_file", "edit_file", "list_files"]) {
      expect(offered).not.toContain(covered);
    }
    expect(offered).toContain("apply_diff");
  });

  it.each(TABLE)("$name", async ({ input, output, error, file }) => {
    const { root, tools } = await workspace();
    const result = await runAnthropicNativeToolUse({
      tools,
      toolUse: { id: "toolu_1", name: "str_replace_based_edit_tool", input },
    });
    expect(result.is_error).toBe(error);
    if (typeof output === "string") expect(result.content).toBe(output);
    else expect(result.content).toMatch(output);
    if (file !== undefined) expect(await readFile(path.join(root, file[0]), "utf8")).toBe(file[1]);
  });

  it("runs bash commands, and a restart has nothing to restart", async () => {
    const { tools } = await workspace();
    const ran = await runAnthropicNativeToolUse({
      tools,
      toolUse: { id: "toolu_2", name: "bash", input: { command: "cat pkg/util.py; exit 3" } },
    });
    expect(ran).toMatchObject({ is_error: true, content: expect.stringContaining("x = 1") });
    expect(ran.content).toContain("[exit 3]");
    const restarted = await runAnthropicNativeToolUse({
      tools,
      toolUse: { id: "toolu_3", name: "bash", input: { restart: true } },
    });
    expect(restarted).toMatchObject({ is_error: false });
  });
});

describe("OpenAI apply_patch and shell calls over pleach's tools", () => {
  it("applies create, update and delete operations with the V4A engine", async () => {
    const { root, tools } = await workspace();
    const created = await runOpenAIApplyPatchCall({
      tools,
      call: {
        call_id: "c1",
        operation: { type: "create_file", path: "b.txt", diff: "+one\n+two\n" },
      },
    });
    expect(created).toMatchObject({ status: "completed" });
    expect(await readFile(path.join(root, "b.txt"), "utf8")).toBe("one\ntwo\n");
    const updated = await runOpenAIApplyPatchCall({
      tools,
      call: {
        call_id: "c2",
        operation: {
          type: "update_file",
          path: "app.py",
          diff: "@@ def main():\n-    print('hi')\n+    print('bye')\n",
        },
      },
    });
    expect(updated).toMatchObject({ status: "completed" });
    expect(await readFile(path.join(root, "app.py"), "utf8")).toBe(
      "def main():\n    print('bye')\n    print('hi')\n",
    );
    const ambiguous = await runOpenAIApplyPatchCall({
      tools,
      call: {
        call_id: "c3",
        operation: { type: "update_file", path: "pkg/util.py", diff: "@@\n-y = 1\n+y = 2\n" },
      },
    });
    expect(ambiguous).toMatchObject({
      status: "failed",
      output: expect.stringContaining("FAILED"),
    });
    const deleted = await runOpenAIApplyPatchCall({
      tools,
      call: { call_id: "c4", operation: { type: "delete_file", path: "b.txt" } },
    });
    expect(deleted).toMatchObject({ status: "completed" });
    await expect(readFile(path.join(root, "b.txt"), "utf8")).rejects.toThrow();
  });

  it("runs a shell call's commands through bash", async () => {
    const { tools } = await workspace();
    const output = await runOpenAIShellCall({
      tools,
      call: {
        call_id: "s1",
        action: {
          commands: ["cat pkg/util.py", "exit 4"],
          timeout_ms: 10_000,
          max_output_length: null,
        },
      },
    });
    expect(output.output).toEqual([
      { stdout: "x = 1\n", stderr: "", outcome: { type: "exit", exit_code: 0 } },
      {
        stdout: expect.stringContaining("[exit 4]"),
        stderr: "",
        outcome: { type: "exit", exit_code: 4 },
      },
    ]);
  });
});
