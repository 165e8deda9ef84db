// A Mastra agent over pleach, with a scripted model: pleach's tools (toMastraTools) and Mastra's
// own command tool over a pleach client (toMastraWorkspaceSandbox). Node 22: @mastra/core needs it.
import path from "node:path";
import { Agent } from "@mastra/core/agent";
import { Workspace } from "@mastra/core/workspace";
import { createCodingAgentTools } from "@pleach/coding-agent/tools";
import { createLocalSandbox } from "@pleach/sandbox";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runToolCall } from "../run-tool-call.js";
import type { SandboxClient } from "../sandbox/contract.js";
import { makeTempDir } from "../testing/temp-dir.js";
import { toMastraTools, toMastraWorkspaceSandbox } from "./mastra.js";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A model that plays the given turns in order: a tool call each, then a closing text. */
function scriptedModel(calls: Array<{ toolName: string; input: unknown }>, closing: string) {
  return new MockLanguageModelV3({
    doGenerate: [
      ...calls.map(({ toolName, input }, index) => ({
        content: [
          {
            type: "tool-call" as const,
            toolCallId: `call-${index}`,
            toolName,
            input: JSON.stringify(input),
          },
        ],
        finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
        usage,
        warnings: [],
      })),
      {
        content: [{ type: "text" as const, text: closing }],
        finishReason: { unified: "stop" as const, raw: "stop" },
        usage,
        warnings: [],
      },
    ],
  });
}

let root: string;
let client: SandboxClient;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await makeTempDir("pleach-mastra-"));
  client = await createLocalSandbox({ root });
});
afterAll(() => cleanup());

it("runs pleach's tools in a Mastra agent, the model reading their text", async () => {
  const tools = createCodingAgentTools(client);
  const model = scriptedModel(
    [
      { toolName: "write_file", input: { path: "hello.txt", content: "hi there\n" } },
      { toolName: "bash", input: { command: "cat hello.txt; exit 3" } },
    ],
    "done",
  );
  const agent = new Agent({
    id: "pleach-agent",
    name: "pleach agent",
    instructions: "Use the tools.",
    model,
    tools: toMastraTools(tools),
  });
  const result = await agent.generate("write and read a file", { maxSteps: 5 });
  expect(result.text).toBe("done");
  const expected = await runToolCall({
    tools,
    name: "bash",
    input: { command: "cat hello.txt; exit 3" },
  });
  const lastPrompt = JSON.stringify(model.doGenerateCalls.at(-1)?.prompt);
  expect(lastPrompt).toContain(JSON.stringify(expected.output).slice(1, -1));
  expect(lastPrompt).not.toContain('"stdout"');
});

it("gives Mastra's workspace command tool a pleach sandbox", async () => {
  const model = scriptedModel(
    [
      {
        toolName: "mastra_workspace_execute_command",
        input: { command: "echo from-mastra > made.txt && pwd" },
      },
    ],
    "ok",
  );
  const agent = new Agent({
    id: "workspace-agent",
    name: "workspace agent",
    instructions: "Run commands.",
    model,
    workspace: new Workspace({ sandbox: toMastraWorkspaceSandbox(client) }),
  });
  const result = await agent.generate("make a file", { maxSteps: 4 });
  expect(result.text).toBe("ok");
  expect(await client.readFile("made.txt")).toBe("from-mastra\n");
  expect(JSON.stringify(model.doGenerateCalls.at(-1)?.prompt)).toContain(root);
  // Arguments are quoted for the shell, one word each.
  const sandbox = toMastraWorkspaceSandbox(client);
  const listed = await sandbox.executeCommand?.("printf", ["%s|", "a b", "$HOME", "it's"]);
  expect(listed).toMatchObject({ success: true, exitCode: 0, stdout: "a b|$HOME|it's|" });
  await sandbox.writeFiles?.([{ path: "dir/bytes.bin", content: Buffer.from([0, 255]) }]);
  expect(await client.readFile(path.join("dir", "bytes.bin"), { encoding: "base64" })).toBe("AP8=");
});
