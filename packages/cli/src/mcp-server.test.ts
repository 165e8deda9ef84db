import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { defineTool, ToolError } from "@pleach/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPleachMcpServer, MCP_ERROR_CODE_META_KEY } from "./mcp-server.js";

const run = defineTool({
  name: "run",
  description: "Pretend to run a command.",
  inputSchema: z.strictObject({ exitCode: z.number().int(), size: z.number().int().default(3) }),
  outputSchema: z.object({ output: z.string(), exitCode: z.number() }),
  annotations: { title: "Run", destructiveHint: true },
  execute: async ({ exitCode, size }, { abortSignal }) => {
    if (exitCode < 0) throw new ToolError("TIMEOUT", "the command ran past its time limit");
    const signal = abortSignal instanceof AbortSignal ? "signal" : "no signal";
    return { output: `${signal}:${"x".repeat(size)}`, exitCode };
  },
  toModelOutput: (output) => ({ output: output.output, error: output.exitCode !== 0 }),
});

async function connect() {
  const server = createPleachMcpServer({ tools: [run] });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

describe("createPleachMcpServer", () => {
  it("lists a tool with its title, annotations and schemas", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools).toEqual([
      expect.objectContaining({
        name: "run",
        title: "Run",
        annotations: { title: "Run", destructiveHint: true },
        inputSchema: expect.objectContaining({ required: ["exitCode"] }),
        outputSchema: expect.objectContaining({ type: "object", required: ["output", "exitCode"] }),
      }),
    ]);
    await client.close();
  });

  it("passes the request's abort signal, flags a failed command as isError and keeps its result", async () => {
    const client = await connect();
    await client.listTools();
    expect(await client.callTool({ name: "run", arguments: { exitCode: 0 } })).toMatchObject({
      isError: false,
      structuredContent: { output: "signal:xxx", exitCode: 0 },
    });
    expect(await client.callTool({ name: "run", arguments: { exitCode: 2 } })).toMatchObject({
      isError: true,
      structuredContent: { exitCode: 2 },
    });
    expect(await client.callTool({ name: "run", arguments: { exitCode: -1 } })).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "the command ran past its time limit" }],
      _meta: { [MCP_ERROR_CODE_META_KEY]: "TIMEOUT" },
    });
    await client.close();
  });

  it("caps the text of a huge result at 50,000 characters but keeps structuredContent whole", async () => {
    const client = await connect();
    const result = await client.callTool({ name: "run", arguments: { exitCode: 0, size: 80_000 } });
    const [block] = result.content as Array<{ type: string; text: string }>;
    expect(block?.text.length).toBeLessThanOrEqual(50_000);
    expect(block?.text).toContain("characters cut from the middle");
    expect((result.structuredContent as { output: string }).output).toHaveLength(
      "signal:".length + 80_000,
    );
    await client.close();
  });
});
