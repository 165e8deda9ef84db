// ai@7's own additions: the sandbox session a tool gets from generateText. Node 22 (ai@7 needs it).
import { createLocalSandbox } from "@pleach/sandbox";
import {
  type Experimental_SandboxSession,
  generateText,
  jsonSchema,
  stepCountIs,
  tool,
} from "ai-v7";
import { MockLanguageModelV3 } from "ai-v7/test";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { SandboxClient } from "../sandbox/contract.js";
import { makeTempDir } from "../testing/temp-dir.js";
import { toAISDKSandboxSession, toAISDKTools } from "./ai-sdk.js";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

let client: SandboxClient;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  const temp = await makeTempDir("pleach-ai-sdk-7-");
  cleanup = temp.cleanup;
  client = await createLocalSandbox({ root: temp.dir });
});
afterAll(() => cleanup());

it("gives ai@7's tools pleach's sandbox as experimental_sandbox, beside pleach's own tools", async () => {
  const session: Experimental_SandboxSession = toAISDKSandboxSession(client);
  const shell = tool({
    description: "Run a command in the sandbox.",
    inputSchema: jsonSchema<{ command: string }>({
      type: "object",
      properties: { command: { type: "string" } },
      required: ["command"],
    }),
    execute: async ({ command }, { experimental_sandbox }) => {
      if (experimental_sandbox === undefined) throw new Error("no sandbox");
      const { stdout, exitCode } = await experimental_sandbox.run({ command });
      return `exit ${exitCode}: ${stdout}`;
    },
  });
  const model = new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          {
            type: "tool-call",
            toolCallId: "s1",
            toolName: "shell",
            input: JSON.stringify({ command: "echo made > made.txt && cat made.txt" }),
          },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      },
      {
        content: [{ type: "text", text: "done" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      },
    ],
  });
  const result = await generateText({
    model,
    tools: { shell, ...toAISDKTools([]) },
    experimental_sandbox: session,
    prompt: "make a file",
    stopWhen: stepCountIs(3),
  });
  expect(result.text).toBe("done");
  expect(JSON.stringify(model.doGenerateCalls[1]?.prompt)).toContain("exit 0: made");
  expect(await client.readFile("made.txt")).toBe("made\n");
});
