// pleach mcp's stdio wire answers a server/discover without its 2026-07-28 envelope with -32602
// (invalid params), as MCP 2026-07-28 and the SDK's HTTP entry do, where the SDK's stdio entry
// alone hands it to the 2025 server and answers -32601; everything else passes through.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  InMemoryTransport,
  type JSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { defineTool } from "@pleach/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPleachMcpServerFactory } from "./mcp-server.js";
import { PleachStdioWire } from "./mcp-stdio-wire.js";

const echo = defineTool({
  name: "echo",
  description: "Answer with the text.",
  inputSchema: z.strictObject({ text: z.string() }),
  outputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ text }),
});

const ENVELOPE = {
  [PROTOCOL_VERSION_META_KEY]: "2026-07-28",
  [CLIENT_INFO_META_KEY]: { name: "test", version: "1.0.0" },
  [CLIENT_CAPABILITIES_META_KEY]: {},
};

/** Serve pleach on one stdio connection (through the wire, or the bare transport); send one request. */
async function answer(
  request: Record<string, unknown>,
  wire: boolean,
): Promise<Record<string, unknown>> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const handle = serveStdio(createPleachMcpServerFactory({ tools: [echo] }), {
    transport: wire ? new PleachStdioWire(serverSide) : serverSide,
  });
  const reply = new Promise<JSONRPCMessage>((resolve) => {
    clientSide.onmessage = resolve;
  });
  await clientSide.start();
  await clientSide.send({ jsonrpc: "2.0", id: 1, ...request } as JSONRPCMessage);
  try {
    return (await reply) as Record<string, unknown>;
  } finally {
    await handle.close();
  }
}

describe("PleachStdioWire", () => {
  it.for([
    ["no _meta", {}],
    ["a _meta without the protocol version", { _meta: { progressToken: 1 } }],
  ] as const)("answers server/discover with %s with -32602", async ([, params]) => {
    const reply = await answer({ method: "server/discover", params }, true);
    expect(reply.error).toMatchObject({ code: -32602 });
    expect((reply.error as { message: string }).message).toContain(PROTOCOL_VERSION_META_KEY);
    // What the SDK's stdio entry answers by itself: the method is not found.
    const bare = await answer({ method: "server/discover", params }, false);
    expect(bare.error).toMatchObject({ code: -32601 });
  });

  it("passes a server/discover with its envelope and a 2025 initialize through", async () => {
    const discovered = await answer(
      { method: "server/discover", params: { _meta: ENVELOPE } },
      true,
    );
    expect(discovered.error).toBeUndefined();
    expect(discovered.result).toMatchObject({ supportedVersions: ["2026-07-28"] });
    const initialized = await answer(
      {
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "test", version: "1.0.0" },
        },
      },
      true,
    );
    expect(initialized.result).toMatchObject({
      protocolVersion: "2025-06-18",
      serverInfo: { name: "pleach" },
    });
  });
});
