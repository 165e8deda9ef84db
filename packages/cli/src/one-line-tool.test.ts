// A tool added with one registry line reaches every face with no other change: MCP, `pleach call`
// and `pleach tools`, the three adapters, and the agent runtime, where the session's file state
// and the memory of unchanged reads work from what the tool declares, not from its name.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { createCodingAgentRuntime, createScriptedModel } from "@pleach/coding-agent/runtime";
import type { SandboxClient } from "@pleach/coding-agent/sandbox";
import { createCodingAgentTools, type ToolRegistration } from "@pleach/coding-agent/tools";
import { defineTool } from "@pleach/core";
import { toAISDKTools } from "@pleach/core/ai-sdk";
import { runAnthropicToolUse } from "@pleach/core/anthropic";
import { runOpenAIChatToolCall, runOpenAIResponsesToolCall } from "@pleach/core/openai";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox, createLocalSandboxProvider } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { CliIo } from "./cli-support.js";
import { callCommand } from "./commands/call.js";
import { toolsCommand } from "./commands/tools.js";
import { createPleachMcpServer } from "./mcp-server.js";

/** A test-only tool: the first lines of a file, declaring the file it reads. */
function createHeadTool(client: SandboxClient) {
  return defineTool({
    name: "head_lines",
    description: "The first lines of a file.",
    inputSchema: z.strictObject({ path: z.string().min(1), count: z.number().int().min(1) }),
    outputSchema: z.object({ lines: z.array(z.string()) }),
    files: { reads: ({ path }) => [path], readKey: ({ count }) => String(count) },
    execute: async ({ path, count }) => ({
      lines: (await client.readFile(path)).split("\n").slice(0, count),
    }),
    toModelOutput: ({ lines }) => ({ output: lines.join("\n"), error: false }),
  });
}

// The one line.
const extraTools: ToolRegistration[] = [{ name: "head_lines", create: createHeadTool }];

async function workspace(): Promise<string> {
  const dir = await useTempDir("pleach-one-line-tool-");
  await writeFile(path.join(dir, "a.txt"), "one\ntwo\nthree\n");
  return dir;
}

async function tools() {
  const root = await workspace();
  const client = await createLocalSandbox({ root, mode: "workspace-write" });
  return createCodingAgentTools(client, { extraTools });
}

function capturedIo(cwd: string) {
  const out = { stdout: "", stderr: "" };
  const io: CliIo = {
    stdout: (text) => {
      out.stdout += text;
    },
    stderr: (text) => {
      out.stderr += text;
    },
    readStdin: async () => undefined,
    cwd,
  };
  return { io, out };
}

describe("a tool registered in one line", () => {
  it("is made after the ten, and refused when its name is taken", async () => {
    const names = (await tools()).map((tool) => tool.name);
    expect(names.at(-1)).toBe("head_lines");
    expect(names).toHaveLength(11);
    const client = await createLocalSandbox({ root: await workspace() });
    expect(() =>
      createCodingAgentTools(client, {
        extraTools: [{ name: "read_file", create: createHeadTool }],
      }),
    ).toThrow(/two tools are named "read_file"/);
    expect(() =>
      createCodingAgentTools(client, {
        extraTools: [{ name: "head", create: createHeadTool }],
      }),
    ).toThrow(/registered as "head" is named head_lines/);
  });

  it("is served over MCP", async () => {
    const server = createPleachMcpServer({ tools: await tools(), structuredOutput: true });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name)).toContain("head_lines");
    expect(
      await client.callTool({ name: "head_lines", arguments: { path: "a.txt", count: 2 } }),
    ).toMatchObject({ isError: false, structuredContent: { lines: ["one", "two"] } });
    await client.close();
  });

  it("is called by `pleach call` and listed by `pleach tools`", async () => {
    const root = await workspace();
    const called = capturedIo(root);
    const code = await callCommand({
      args: ["head_lines", '{"path": "a.txt", "count": 1}', "--text"],
      io: called.io,
      extraTools,
    });
    expect({ code, ...called.out }).toEqual({ code: 0, stdout: "one\n", stderr: "" });
    const listed = capturedIo(root);
    expect(await toolsCommand({ args: ["--json"], io: listed.io, extraTools })).toBe(0);
    expect(JSON.parse(listed.out.stdout).at(-1)).toMatchObject({
      name: "head_lines",
      inputSchema: { required: ["path", "count"] },
    });
  });

  it("runs through the OpenAI and Anthropic adapters", async () => {
    const all = await tools();
    const args = JSON.stringify({ path: "a.txt", count: 2 });
    expect(
      await runOpenAIChatToolCall({
        tools: all,
        toolCall: { id: "c1", type: "function", function: { name: "head_lines", arguments: args } },
      }),
    ).toEqual({ role: "tool", tool_call_id: "c1", content: "one\ntwo" });
    expect(
      await runOpenAIResponsesToolCall({
        tools: all,
        call: { type: "function_call", call_id: "c2", name: "head_lines", arguments: args },
      }),
    ).toEqual({ type: "function_call_output", call_id: "c2", output: "one\ntwo" });
    expect(
      await runAnthropicToolUse({
        tools: all,
        toolUse: { id: "c3", name: "head_lines", input: { path: "a.txt", count: 2 } },
      }),
    ).toEqual({ type: "tool_result", tool_use_id: "c3", content: "one\ntwo", is_error: false });
  });

  it("runs through the AI SDK adapter", async () => {
    const tool = toAISDKTools(await tools()).head_lines;
    const input = { path: "a.txt", count: 3 };
    const output = await tool?.execute?.(input, { toolCallId: "c1", messages: [] });
    expect(output).toEqual({ lines: ["one", "two", "three"] });
    expect(await tool?.toModelOutput?.({ toolCallId: "c1", input, output })).toEqual({
      type: "text",
      value: "one\ntwo\nthree",
    });
  });

  it("runs in the agent runtime, with the file state and read memory from its declaration", async () => {
    const root = await workspace();
    const model = createScriptedModel({
      steps: [
        { toolCalls: [{ name: "head_lines", input: { path: "a.txt", count: 1 } }] },
        { toolCalls: [{ name: "head_lines", input: { path: "./a.txt", count: 1 } }] },
        { toolCalls: [{ name: "head_lines", input: { path: "a.txt", count: 2 } }] },
        // Allowed without read_file: head_lines declared that it read a.txt.
        { toolCalls: [{ name: "edit_file", input: { path: "a.txt", old: "one", new: "uno" } }] },
        { text: "done" },
      ],
    });
    const run = createCodingAgentRuntime({
      sandboxProvider: createLocalSandboxProvider({ root }),
      model,
      tools: ({ client, fileState }) => createCodingAgentTools(client, { fileState, extraTools }),
    }).run({ task: "t" });
    const outputs: string[] = [];
    for await (const event of run) if (event.type === "tool-result") outputs.push(event.output);
    expect(outputs).toEqual([
      "one",
      "[unchanged since your last head_lines of this file at step 1; its content is above]",
      "one\ntwo",
      expect.stringMatching(/^edited a\.txt/),
    ]);
    expect(model.requests[0]?.tools.map((tool) => tool.name)).toContain("head_lines");
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("uno\ntwo\nthree\n");
  });
});
