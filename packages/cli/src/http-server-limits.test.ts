// The MCP HTTP server's connection limits (shared with the sandbox server): connections that make
// no authorised request are answered 408 and closed, connections past the limit get 503 with
// Retry-After, and the MCP client is served all the while; an event stream outlives the request
// timeout. Loopback only; every test ends by itself.
import net from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { defineTool } from "@pleach/core";
import { holdIdleConnections } from "@pleach/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, startMcpHttpServer } from "./http-server.js";
import { createPleachMcpServerFactory } from "./mcp-server.js";

const token = "limits-token-0123456789abcdef";
const wait = defineTool({
  name: "wait",
  description: "Wait, then echo the text.",
  inputSchema: z.object({ text: z.string(), ms: z.number() }),
  outputSchema: z.object({ text: z.string() }),
  execute: async ({ text, ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { text };
  },
});
const factory = createPleachMcpServerFactory({ tools: [wait], structuredOutput: true });
const servers: McpHttpServer[] = [];
const stops: Array<() => void> = [];

afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  for (const server of servers.splice(0)) await server.close();
});

async function serve(
  connectionLimits: Parameters<typeof startMcpHttpServer>[0]["connectionLimits"],
): Promise<McpHttpServer> {
  const server = await startMcpHttpServer({ factory, token, connectionLimits });
  servers.push(server);
  return server;
}

/** A tool call through the MCP SDK's client, over its own connections. */
async function call(server: McpHttpServer, ms = 0): Promise<unknown> {
  const client = new Client({ name: "limits-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(server.url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: "wait", arguments: { text: "hi", ms } });
    return result.structuredContent;
  } finally {
    await client.close();
  }
}

/** A raw connection sending `text`; resolves to all it was answered once closed. */
function raw(server: McpHttpServer, text: string): { socket: net.Socket; answer: Promise<string> } {
  const socket = net.connect(Number(server.url.port), "127.0.0.1");
  let answer = "";
  socket.on("connect", () => socket.write(text));
  socket.on("data", (chunk) => {
    answer += chunk.toString("latin1");
  });
  socket.on("error", () => {});
  return { socket, answer: new Promise((resolve) => socket.on("close", () => resolve(answer))) };
}

const authorisedGet = (server: McpHttpServer) =>
  `GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:${server.url.port}\r\nAuthorization: Bearer ${token}\r\n\r\n`;

describe("MCP HTTP server connection limits", () => {
  it("serves the MCP client while 300 idle connections are opened, and closes them all with 408", async () => {
    const deadline = 2_000;
    const server = await serve({ maxUnauthorizedConnections: 50, unauthorizedTimeoutMs: deadline });
    const idle = holdIdleConnections({ port: Number(server.url.port), count: 300, children: 2 });
    stops.push(idle.kill);
    await idle.ready;
    expect(await call(server)).toEqual({ text: "hi" });
    const outcome = await idle.closed;
    expect(outcome).toMatchObject({ opened: 300, answered408: 300, unanswered: 0, errors: 0 });
    expect(outcome.longestOpenMs).toBeLessThan(deadline + 1_500);
    // The limits answer as MCP clients read an error.
    expect(outcome.bodies).toContain('"jsonrpc":"2.0"');
    expect(outcome.bodies).toContain('"reason":"unauthorized-limit"');
    expect(outcome.bodies).toContain('"reason":"unauthorized-timeout"');
  }, 30_000);

  it("answers 503 with Retry-After past its connection limit", async () => {
    const server = await serve({
      maxConnections: 12,
      maxUnauthorizedConnections: 4,
      unauthorizedTimeoutMs: 20_000,
    });
    const kept = Array.from({ length: 8 }, () => raw(server, authorisedGet(server)));
    const idle = Array.from({ length: 4 }, () => raw(server, ""));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await raw(server, authorisedGet(server)).answer;
    expect(refused).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(refused.toLowerCase()).toContain("retry-after: 1\r\n");
    expect(refused).toContain('"reason":"connections"');
    for (const { socket } of [...kept, ...idle]) socket.destroy();
    await Promise.all([...kept, ...idle].map(({ answer }) => answer));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await call(server)).toEqual({ text: "hi" });
  }, 20_000);

  it("does not cut an answer that takes longer than the request timeout", async () => {
    const server = await serve({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    expect(await call(server, 1_500)).toEqual({ text: "hi" });
    // Headers that never end are cut, with 408.
    const slow = await raw(server, `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n`).answer;
    expect(slow).toMatch(/^HTTP\/1\.1 408 /);
    // With a JSON-RPC error body that says why, as the sandbox server answers in its own.
    const [head, body] = slow.split("\r\n\r\n");
    expect(head).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(body ?? "")).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32000,
        message: expect.stringMatching(/did not arrive in time \(headers within 300 ms/),
        data: { reason: "request-timeout" },
      },
    });
  }, 20_000);

  it("answers a request its parser refuses, and a body over the limit, with a JSON-RPC error", async () => {
    const server = await serve({});
    const malformed = await raw(
      server,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: twelve\r\n\r\n`,
    ).answer;
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(malformed.split("\r\n\r\n")[1] ?? "")).toMatchObject({
      jsonrpc: "2.0",
      error: {
        message: expect.stringMatching(/^malformed HTTP request/),
        data: { reason: "malformed" },
      },
    });
    const tooLarge = await raw(
      server,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n{`,
    ).answer;
    expect(tooLarge).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(tooLarge.split("\r\n\r\n")[1] ?? "")).toMatchObject({
      jsonrpc: "2.0",
      error: {
        message: expect.stringMatching(/larger than this server's limit of 4,194,304 bytes/),
      },
    });
  }, 20_000);
});
