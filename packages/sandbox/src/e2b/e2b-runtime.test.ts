import {
  type AgentEvent,
  createCodingAgentRuntime,
  createScriptedModel,
} from "@pleach/coding-agent/runtime";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxServer, type SandboxServer } from "../server/sandbox-server.js";
import { createE2BSandboxProvider } from "./e2b-provider.js";

// pleach's ten tools and its runtime, unchanged, over createE2BSandboxProvider pointed at
// `sandbox serve --protocol e2b` on loopback: a scripted model calls every tool once.

const TOKEN = "e2b-runtime-token-0123456789abcdef";
let server: SandboxServer;
let serverRoot: { dir: string; cleanup(): Promise<void> };

beforeAll(async () => {
  serverRoot = await makeTempDir("pleach-e2b-runtime-");
  server = await createSandboxServer({ root: serverRoot.dir, token: TOKEN, protocol: "e2b" });
});
afterAll(async () => {
  await server?.close();
  await serverRoot?.cleanup();
});

const GIT = "git -c user.name=pleach -c user.email=pleach@example.invalid";

describe("the coding-agent runtime over the E2B provider", () => {
  it("runs all ten tools through a scripted model and stops on its answer", async () => {
    const url = server.url.href.replace(/\/$/, "");
    const provider = createE2BSandboxProvider({ apiKey: TOKEN, apiUrl: url, sandboxUrl: url });
    const model = createScriptedModel({
      steps: [
        { toolCalls: [{ name: "write_file", input: { path: "a.txt", content: "hello world\n" } }] },
        { toolCalls: [{ name: "read_file", input: { path: "a.txt" } }] },
        {
          toolCalls: [{ name: "edit_file", input: { path: "a.txt", old: "world", new: "there" } }],
        },
        {
          toolCalls: [
            {
              name: "apply_diff",
              input: {
                path: "a.txt",
                diff: "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-hello there\n+hello e2b\n",
              },
            },
          ],
        },
        { toolCalls: [{ name: "search_files", input: { pattern: "e2b" } }] },
        { toolCalls: [{ name: "list_files", input: { dir: "." } }] },
        {
          toolCalls: [
            {
              name: "bash",
              input: {
                command: `${GIT} init -q origin && ${GIT} -C origin commit -q --allow-empty -m first && echo made`,
              },
            },
          ],
        },
        { toolCalls: [{ name: "git_clone", input: { url: "./origin", dest: "copy" } }] },
        { toolCalls: [{ name: "run_tests", input: { command: "echo '1 passed'; true" } }] },
        { toolCalls: [{ name: "git_diff", input: { cwd: "copy" } }] },
        { text: "Done over E2B." },
      ],
    });
    const run = createCodingAgentRuntime({ sandboxProvider: provider, model }).run({
      task: "Use every tool once",
    });
    const results: Array<Extract<AgentEvent, { type: "tool-result" }>> = [];
    for await (const event of run) if (event.type === "tool-result") results.push(event);
    const result = await run.result;
    expect(
      results.map((event) => [
        event.toolName,
        event.error ? `${event.code}: ${event.output}` : "ok",
      ]),
    ).toEqual([
      ["write_file", "ok"],
      ["read_file", "ok"],
      ["edit_file", "ok"],
      ["apply_diff", "ok"],
      ["search_files", "ok"],
      ["list_files", "ok"],
      ["bash", "ok"],
      ["git_clone", "ok"],
      ["run_tests", "ok"],
      ["git_diff", "ok"],
    ]);
    expect(result).toMatchObject({
      stopReason: "final-answer",
      finalText: "Done over E2B.",
      toolCalls: 10,
    });
    expect(server.sandboxCount).toBe(0);
  });
});
