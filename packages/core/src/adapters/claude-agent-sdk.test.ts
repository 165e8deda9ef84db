import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createCodingAgentTools } from "@pleach/coding-agent/tools";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runToolCall } from "../run-tool-call.js";
import { makeTempDir } from "../testing/temp-dir.js";
import { toClaudeAgentMcpServer } from "./claude-agent-sdk.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

let tools: ReturnType<typeof createCodingAgentTools>;
let client: Client;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  const temp = await makeTempDir("pleach-claude-agent-");
  await writeFile(path.join(temp.dir, "a.txt"), "alpha\nbeta\n");
  await writeFile(path.join(temp.dir, "pixel.png"), PNG);
  tools = createCodingAgentTools(await createLocalSandbox({ root: temp.dir }));
  const server = toClaudeAgentMcpServer(tools);
  expect(server).toMatchObject({ type: "sdk", name: "pleach" });
  // What the Agent SDK does with the server: connect an MCP client to its instance in process.
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.instance.connect(serverSide);
  client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  cleanup = async () => {
    await client.close();
    await temp.cleanup();
  };
});
afterAll(() => cleanup());

it("lists pleach's tools with their schemas and annotations", async () => {
  const { tools: listed } = await client.listTools();
  expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
  const bash = listed.find((tool) => tool.name === "bash");
  expect(bash?.inputSchema).toMatchObject({
    type: "object",
    properties: { command: expect.objectContaining({ type: "string" }) },
    required: expect.arrayContaining(["command"]),
  });
  expect(bash?.annotations).toMatchObject({ destructiveHint: true });
});

it("answers each call with the text every face shows, one text block, not JSON", async () => {
  for (const [name, input] of [
    ["read_file", { path: "a.txt" }],
    ["bash", { command: "echo out; exit 2" }],
  ] as const) {
    const result = await client.callTool({ name, arguments: input });
    const expected = await runToolCall({ tools, name, input });
    expect(result.content).toEqual([{ type: "text", text: expected.output }]);
    // A command that ran and failed is a call that did its job.
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toBeUndefined();
  }
  const bash = await client.callTool({ name: "bash", arguments: { command: "echo out; exit 2" } });
  expect(JSON.stringify(bash.content)).toContain("[exit 2]");
});

it("marks a refusal as isError with the model-readable message", async () => {
  const result = await client.callTool({ name: "read_file", arguments: { path: "../outside" } });
  expect(result.isError).toBe(true);
  const expected = await runToolCall({ tools, name: "read_file", input: { path: "../outside" } });
  expect(result.content).toEqual([{ type: "text", text: expected.output }]);
});

it("sends an image read as base64 as an MCP image", async () => {
  const result = await client.callTool({
    name: "read_file",
    arguments: { path: "pixel.png", encoding: "base64" },
  });
  expect(result.content).toEqual([
    { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
  ]);
});
