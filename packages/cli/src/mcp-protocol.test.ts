import {
  Client,
  InMemoryTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { createMcpHandler, LOG_LEVEL_META_KEY } from "@modelcontextprotocol/server";
import { type AnyToolDefinition, defineTool } from "@pleach/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type CreatePleachMcpServerOptions,
  createPleachMcpServer,
  createPleachMcpServerFactory,
  PLEACH_MCP_INSTRUCTIONS,
} from "./mcp-server.js";
import { PLEACH_ICON } from "./mcp-tool-listing.js";

const NOTE =
  "[full output: 213,455 bytes kept at /run/pleach-output/cmd-4.log — read_file with offset/limit]";

/** A command whose output was cut and kept whole, as bash returns it. */
const cut = defineTool({
  name: "cut",
  description: "Print a long output, cut, kept whole.",
  inputSchema: z.strictObject({ path: z.string().default("/run/pleach-output/cmd-4.log") }),
  outputSchema: z.object({
    output: z.string(),
    fullOutput: z.object({ path: z.string(), bytes: z.number() }),
  }),
  execute: async ({ path }) => ({
    output: `head…tail\n${NOTE.replace("/run/pleach-output/cmd-4.log", path)}`,
    fullOutput: { path, bytes: 213_455 },
  }),
  toModelOutput: (output) => ({ output: output.output, error: false }),
});

const slow = defineTool({
  name: "slow",
  description: "Wait, then answer; or fail as a bug would.",
  inputSchema: z.strictObject({ ms: z.number().int(), crash: z.boolean().default(false) }),
  outputSchema: z.object({ waited: z.number() }),
  execute: async ({ ms, crash }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (crash) throw new TypeError("cannot read properties of undefined");
    return { waited: ms };
  },
});

/**
 * A client of the given revision: 2025 over a linked pair to one server; 2026-07-28, which the
 * SDK serves only behind its era-deciding entries, through `createMcpHandler` as `--http` does.
 */
async function connect(
  era: "2025" | "2026-07-28",
  tools: readonly AnyToolDefinition[] = [cut, slow],
  options: Omit<CreatePleachMcpServerOptions, "tools"> = {},
) {
  const serverOptions = { tools, progressIntervalMs: 50, ...options };
  let client: Client;
  if (era === "2025") {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createPleachMcpServer(serverOptions).connect(serverSide);
    client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
  } else {
    const handler = createMcpHandler(createPleachMcpServerFactory(serverOptions));
    client = new Client(
      { name: "test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL("http://127.0.0.1/mcp"), {
        fetch: (url, init) => handler.fetch(new Request(url, init)),
      }),
    );
  }
  const messages: unknown[] = [];
  client.setNotificationHandler("notifications/message", ({ params }) => {
    messages.push(params.data);
  });
  return { client, messages };
}

describe("pleach mcp on MCP 2026-07-28 and 2025", () => {
  it("serves both revisions from one server: instructions, icons, the same tools", async () => {
    for (const era of ["2025", "2026-07-28"] as const) {
      const { client } = await connect(era);
      const version = client.getNegotiatedProtocolVersion();
      if (era === "2026-07-28") expect(version).toBe("2026-07-28");
      else expect(version).toMatch(/^2025-/);
      expect(client.getInstructions()).toBe(PLEACH_MCP_INSTRUCTIONS);
      expect(client.getServerVersion()?.icons).toEqual([PLEACH_ICON]);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => [tool.name, tool.icons])).toEqual([
        ["cut", [PLEACH_ICON]],
        ["slow", [PLEACH_ICON]],
      ]);
      await client.close();
    }
  });

  it("keeps its instructions short, and says results are bounded and how to page", () => {
    expect(PLEACH_MCP_INSTRUCTIONS.length).toBeLessThan(800);
    expect(PLEACH_MCP_INSTRUCTIONS).toContain("bounded");
    expect(PLEACH_MCP_INSTRUCTIONS).toContain("offset");
  });

  it("sends a 2026-07-28 request no log message unless it carries a log level; a crash goes to logError", async () => {
    const lines: string[] = [];
    const { client, messages } = await connect("2026-07-28", [slow], {
      logError: (line) => lines.push(line),
    });
    const crashed = await client.callTool({ name: "slow", arguments: { ms: 120, crash: true } });
    expect(crashed.isError).toBe(true);
    expect(messages).toEqual([]);
    expect(lines).toEqual(["slow failed: internal error: cannot read properties of undefined"]);

    await client.callTool({
      name: "slow",
      arguments: { ms: 120 },
      _meta: { [LOG_LEVEL_META_KEY]: "debug" },
    });
    expect(messages).toEqual(expect.arrayContaining(["slow started", "slow running… 0s"]));
    await client.close();
  });

  it("still sends a 2025 client its server-side errors unasked, as before", async () => {
    const { client, messages } = await connect("2025", [slow]);
    await client.callTool({ name: "slow", arguments: { ms: 1, crash: true } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(messages).toEqual(["slow failed: internal error: cannot read properties of undefined"]);
    await client.close();
  });

  it("links a kept full output as a resource beside the same text, and reads it one bounded page", async () => {
    const asked: string[] = [];
    const readKeptOutput = async (path: string) => {
      asked.push(path);
      return `[lines 1-2 of 9000; call read_file again with offset 3 to continue]`;
    };
    for (const era of ["2025", "2026-07-28"] as const) {
      const { client } = await connect(era, [cut], { readKeptOutput });
      const result = await client.callTool({ name: "cut", arguments: {} });
      expect(result.content).toEqual([
        { type: "text", text: `head…tail\n${NOTE}` },
        {
          type: "resource_link",
          uri: "pleach://output/cmd-4.log",
          name: "cmd-4.log",
          description: expect.stringContaining("213,455 bytes"),
          mimeType: "text/plain",
          size: 213_455,
        },
      ]);
      expect((await client.listResources()).resources.map(({ uri }) => uri)).toEqual([
        "pleach://output/cmd-4.log",
      ]);
      expect(await client.readResource({ uri: "pleach://output/cmd-4.log" })).toMatchObject({
        contents: [
          {
            uri: "pleach://output/cmd-4.log",
            mimeType: "text/plain",
            text: "[lines 1-2 of 9000; call read_file again with offset 3 to continue]",
          },
        ],
      });
      for (const uri of [
        "pleach://output/../secret",
        "pleach://output/.hidden",
        "file:///etc/passwd",
      ]) {
        await expect(client.readResource({ uri })).rejects.toThrow(/no such resource|not found/i);
      }
      await client.close();
    }
    expect(asked).toEqual(["/run/pleach-output/cmd-4.log", "/run/pleach-output/cmd-4.log"]);
  });

  it("links nothing outside /run/pleach-output, and nothing without a reader", async () => {
    const readKeptOutput = async () => "page";
    const { client } = await connect("2026-07-28", [cut], { readKeptOutput });
    for (const path of [
      "src/a.ts",
      ".pleach-output/cmd-4.log",
      "/run/pleach-output/../cmd-4.log",
      "/run/pleach-output/.hidden",
      "/etc/passwd",
    ]) {
      const elsewhere = await client.callTool({ name: "cut", arguments: { path } });
      expect(elsewhere.content).toHaveLength(1);
    }
    await client.close();
    const plain = await connect("2026-07-28", [cut]);
    expect((await plain.client.callTool({ name: "cut", arguments: {} })).content).toHaveLength(1);
    expect(plain.client.getServerCapabilities()?.resources).toBeUndefined();
    await plain.client.close();
  });
});
