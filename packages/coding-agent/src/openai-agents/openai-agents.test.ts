import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  Agent,
  applyPatchTool,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  shellTool,
  Usage,
} from "@openai/agents";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { createReadFileTool } from "../tools/read-file/tool.js";
import { createPleachEditor, createPleachShell, toOpenAIAgentsTools } from "./index.js";

/** A model that answers each request with the next scripted output and records the requests. */
function scriptedModel(outputs: ModelResponse["output"][]): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async getResponse(request) {
      requests.push(request);
      const output = outputs.shift();
      if (output === undefined) throw new Error("the script ran out");
      return { usage: new Usage(), output };
    },
    // biome-ignore lint/correctness/useYield: the runner here never streams.
    async *getStreamedResponse() {
      throw new Error("not scripted");
    },
  };
}

describe("OpenAI Agents SDK: Shell, Editor and tools over a pleach sandbox", () => {
  it("runs a Runner whose shell_call and apply_patch_call run in the sandbox", async () => {
    const root = await useTempDir("pleach-agents-");
    await writeFile(path.join(root, "app.js"), "export const answer = 41;\n");
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    const model = scriptedModel([
      [
        {
          type: "shell_call",
          callId: "call_shell",
          status: "completed",
          action: { commands: ["cat app.js", "exit 2"], timeoutMs: 10_000 },
        },
        {
          type: "apply_patch_call",
          callId: "call_patch",
          status: "completed",
          operation: {
            type: "update_file",
            path: "app.js",
            diff: "@@\n-export const answer = 41;\n+export const answer = 42;\n",
          },
        },
        {
          type: "apply_patch_call",
          callId: "call_bad_patch",
          status: "completed",
          operation: { type: "update_file", path: "app.js", diff: "@@\n-not there\n+x\n" },
        },
        {
          type: "function_call",
          callId: "call_read",
          name: "read_file",
          status: "completed",
          arguments: JSON.stringify({ path: "missing.js" }),
        },
      ],
      [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "done" }],
        },
      ],
    ]);
    const agent = new Agent({
      name: "coder",
      instructions: "Fix app.js.",
      model,
      tools: [
        shellTool({ shell: createPleachShell(client) }),
        applyPatchTool({ editor: createPleachEditor(client) }),
        ...toOpenAIAgentsTools([createReadFileTool(client)]),
      ],
    });
    const result = await new Runner({ tracingDisabled: true }).run(agent, "fix it");
    expect(result.finalOutput).toBe("done");
    expect(await readFile(path.join(root, "app.js"), "utf8")).toBe("export const answer = 42;\n");

    // What the model was handed back for each call, in the SDK's protocol items.
    const input = model.requests[1]?.input;
    if (!Array.isArray(input)) throw new Error("no input items");
    const item = (type: string, callId: string) =>
      input.find(
        (entry) =>
          (entry as { type?: string }).type === type &&
          (entry as { callId?: string }).callId === callId,
      ) as Record<string, unknown> | undefined;
    expect(item("shell_call_output", "call_shell")?.output).toEqual([
      expect.objectContaining({
        stdout: "export const answer = 41;\n",
        outcome: { type: "exit", exitCode: 0 },
      }),
      expect.objectContaining({
        stdout: expect.stringContaining("[exit 2]"),
        outcome: { type: "exit", exitCode: 2 },
      }),
    ]);
    expect(item("apply_patch_call_output", "call_patch")).toMatchObject({ status: "completed" });
    expect(item("apply_patch_call_output", "call_bad_patch")).toMatchObject({
      status: "failed",
      output: expect.stringContaining("Hunk #1 FAILED"),
    });
    expect(JSON.stringify(item("function_call_result", "call_read"))).toContain("missing.js");
  });
});
