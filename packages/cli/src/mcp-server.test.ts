import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { type AnyToolDefinition, defineTool, ToolError } from "@pleach/core";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  type CreatePleachMcpServerOptions,
  createPleachMcpServer,
  MCP_ERROR_CODE_META_KEY,
  MCP_STRUCTURED_CUT_META_KEY,
} from "./mcp-server.js";
import { PLEACH_ICON } from "./mcp-tool-listing.js";

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

const slow = defineTool({
  name: "slow",
  description: "Wait, then answer; or fail as a bug would.",
  inputSchema: z.strictObject({ ms: z.number().int(), crash: z.boolean().default(false) }),
  outputSchema: z.object({ waited: z.number() }),
  annotations: { title: "Slow" },
  execute: async ({ ms, crash }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (crash) throw new TypeError("cannot read properties of undefined");
    return { waited: ms };
  },
});

async function connect(
  tools: readonly AnyToolDefinition[] = [run],
  options: Omit<CreatePleachMcpServerOptions, "tools"> = {},
) {
  const server = createPleachMcpServer({ tools, progressIntervalMs: 50, ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

describe("createPleachMcpServer", () => {
  it("lists a tool with its title, annotations and input schema, no output schema by default", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools).toEqual([
      {
        name: "run",
        title: "Run",
        description: "Pretend to run a command.",
        annotations: { title: "Run", destructiveHint: true },
        inputSchema: expect.objectContaining({ required: ["exitCode"] }),
        icons: [PLEACH_ICON],
        _meta: { "anthropic/maxResultSizeChars": 50_000 },
      },
    ]);
    await client.close();
    const structured = await connect([run], { structuredOutput: true, maxResultChars: 12_000 });
    expect((await structured.listTools()).tools).toEqual([
      expect.objectContaining({
        outputSchema: expect.objectContaining({ type: "object", required: ["output", "exitCode"] }),
        _meta: { "anthropic/maxResultSizeChars": 12_000 },
      }),
    ]);
    await structured.close();
  });

  it("tells the model of a tool with a time limit that the client may stop waiting first, and the way out", async () => {
    const limited = defineTool({
      name: "tests",
      description: "Run the tests.",
      inputSchema: z.strictObject({ timeout: z.number().int().optional() }),
      outputSchema: z.string(),
      execute: async () => "ok",
    });
    const jobs = defineTool({
      name: "shell",
      description: "Run a command.",
      inputSchema: z.strictObject({ background: z.boolean().optional() }),
      outputSchema: z.string(),
      execute: async () => "ok",
    });
    const listed = async (tools: AnyToolDefinition[]) => {
      const client = await connect(tools);
      const { tools: listing } = await client.listTools();
      await client.close();
      return Object.fromEntries(listing.map((tool) => [tool.name, tool.description]));
    };
    const withJobs = await listed([limited, jobs, run]);
    expect(withJobs.tests).toMatch(
      /^Run the tests\.\n\nOver MCP your client may stop waiting before this time limit .*: run work that may take longer as a background job \(shell with background: true, then poll its output\)/,
    );
    // Tools without a time limit of their own are listed as they describe themselves.
    expect(withJobs.shell).toBe("Run a command.");
    expect(withJobs.run).toBe("Pretend to run a command.");
    expect((await listed([limited])).tests).toMatch(
      /split work that may take longer into shorter calls\.$/,
    );
  });

  it("sends the text alone by default: no structuredContent for a client to show instead", async () => {
    const client = await connect();
    const result = await client.callTool({ name: "run", arguments: { exitCode: 0 } });
    expect(result).toEqual({ content: [{ type: "text", text: "signal:xxx" }], isError: false });
    await client.close();
  });

  it("passes the request's abort signal; isError for a failed call, not for a command that failed", async () => {
    const client = await connect([run], { structuredOutput: true });
    await client.listTools();
    expect(await client.callTool({ name: "run", arguments: { exitCode: 0 } })).toMatchObject({
      isError: false,
      structuredContent: { output: "signal:xxx", exitCode: 0 },
    });
    // The tool did its job: the command it ran failed, which the text and the output say.
    expect(await client.callTool({ name: "run", arguments: { exitCode: 2 } })).toMatchObject({
      isError: false,
      structuredContent: { exitCode: 2 },
    });
    expect(await client.callTool({ name: "run", arguments: { exitCode: -1 } })).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "the command ran past its time limit" }],
      _meta: { [MCP_ERROR_CODE_META_KEY]: "TIMEOUT" },
    });
    await client.close();
  });

  it("reads a failure caused by the server's abort signal as aborted, as the runtime does", async () => {
    const stopping = new AbortController();
    const stuck = defineTool({
      name: "stuck",
      description: "Fail as a broken connection would once the server stops.",
      inputSchema: z.strictObject({}),
      outputSchema: z.object({}),
      execute: async () => {
        stopping.abort();
        throw new Error("socket closed");
      },
    });
    const server = createPleachMcpServer({ tools: [stuck], abortSignal: stopping.signal });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    expect(await client.callTool({ name: "stuck", arguments: {} })).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "aborted" }],
      _meta: { [MCP_ERROR_CODE_META_KEY]: "ABORTED" },
    });
    await client.close();
  });

  it("caps the text of a huge result at 50,000 characters, and structuredContent to the same", async () => {
    const client = await connect([run], { structuredOutput: true });
    const result = await client.callTool({ name: "run", arguments: { exitCode: 3, size: 80_000 } });
    const [block] = result.content as Array<{ type: string; text: string }>;
    expect(block?.text.length).toBeLessThanOrEqual(50_000);
    expect(block?.text).toContain("characters cut from the middle");
    expect(JSON.stringify(result.structuredContent).length).toBeLessThanOrEqual(50_000);
    // The cut is in the long string; the rest of the output is whole.
    expect(result.structuredContent).toMatchObject({
      exitCode: 3,
      output: expect.stringContaining("characters cut from the middle"),
    });
    expect(result._meta).toEqual({ [MCP_STRUCTURED_CUT_META_KEY]: true });
    await client.close();
  });

  it("renders to --max-result-chars", async () => {
    const client = await connect([run], { maxResultChars: 2_000 });
    const result = await client.callTool({ name: "run", arguments: { exitCode: 0, size: 5_000 } });
    const [block] = result.content as Array<{ type: string; text: string }>;
    expect(block?.text.length).toBeLessThanOrEqual(2_000);
    expect(block?.text).toMatch(
      /^signal:x+\n\n\[\.\.\. 3,127 characters cut from the middle of this output \.\.\.\]\n\nx+$/,
    );
    await client.close();
  });

  it("reports a long call's elapsed time when the request carries a progress token", async () => {
    const client = await connect([run, slow], { structuredOutput: true });
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool(
      { name: "slow", arguments: { ms: 400 } },
      { onprogress: (update) => progress.push(update) },
    );
    expect(result).toMatchObject({ isError: false, structuredContent: { waited: 400 } });
    expect(progress.length).toBeGreaterThanOrEqual(3);
    for (const [index, update] of progress.entries()) {
      expect(update.message).toMatch(/^slow running… 0s$/);
      if (index > 0) expect(update.progress).toBeGreaterThan(progress[index - 1]?.progress ?? 0);
    }
    // A quick call sends none.
    progress.length = 0;
    await client.callTool(
      { name: "run", arguments: { exitCode: 0 } },
      { onprogress: (update) => progress.push(update) },
    );
    expect(progress).toEqual([]);
    await client.close();
  });

  it("stops reporting progress once the client cancels the call, though the tool runs on", async () => {
    const server = createPleachMcpServer({ tools: [slow], progressIntervalMs: 50 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const received: Array<{ method?: string; id?: unknown }> = [];
    clientSide.onmessage = (message) => received.push(message as (typeof received)[number]);
    await clientSide.start();
    const send = (message: Record<string, unknown>) =>
      clientSide.send({ jsonrpc: "2.0", ...message } as Parameters<typeof clientSide.send>[0]);
    await send({
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "test", version: "1.0.0" },
      },
    });
    await send({ method: "notifications/initialized" });
    // `slow` ignores its abort signal: it runs its 500 ms whatever the client says.
    await send({
      id: 1,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 500 }, _meta: { progressToken: "p" } },
    });
    const progress = () => received.filter((m) => m.method === "notifications/progress").length;
    await vi.waitFor(() => expect(progress()).toBeGreaterThan(0));
    await send({ method: "notifications/cancelled", params: { requestId: 1 } });
    const atCancel = progress();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(progress()).toBe(atCancel);
    await server.close();
  });

  it("logs server-side errors unasked, and a call's course once the client sets debug", async () => {
    const client = await connect([run, slow]);
    const messages: Array<{ level: string; data: unknown }> = [];
    client.setNotificationHandler("notifications/message", (notification) => {
      messages.push({ level: notification.params.level, data: notification.params.data });
    });
    const crashed = await client.callTool({ name: "slow", arguments: { ms: 0, crash: true } });
    expect(crashed).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "internal error: cannot read properties of undefined" }],
      _meta: { [MCP_ERROR_CODE_META_KEY]: "INTERNAL" },
    });
    // A tool's own refusal is no server-side error: nothing is sent at the default level.
    await client.callTool({ name: "run", arguments: { exitCode: -1 } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(messages).toEqual([
      { level: "error", data: "slow failed: internal error: cannot read properties of undefined" },
    ]);

    messages.length = 0;
    expect(await client.setLoggingLevel("debug")).toEqual({});
    await client.callTool({ name: "slow", arguments: { ms: 200 } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const logged = messages.map(({ data }) => data);
    expect(logged[0]).toBe("slow started");
    expect(logged.at(-1)).toMatch(/^slow done in 0\.[2-9]s$/);
    expect(logged.length).toBeGreaterThanOrEqual(3);
    expect(new Set(logged.slice(1, -1))).toEqual(new Set(["slow running… 0s"]));
    expect(new Set(messages.map(({ level }) => level))).toEqual(new Set(["debug"]));

    messages.length = 0;
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "slow", arguments: { ms: 120 } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(messages).toEqual([]);
    await client.close();
  });
});
