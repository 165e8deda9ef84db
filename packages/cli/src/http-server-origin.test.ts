// The MCP HTTP server's DNS-rebinding guard (MCP Streamable HTTP, security warning): Host and
// Origin are checked before the bearer token; `pleach mcp --http --allow-host` adds hosts.
import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { defineTool } from "@pleach/core";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, startMcpHttpServer } from "./http-server.js";
import { createPleachMcpServerFactory } from "./mcp-server.js";
import { runCli } from "./test-support/run-cli.js";
import { servedUrl } from "./test-support/served-url.js";

const token = "origin-token-0123456789abcdef";
const echo = defineTool({
  name: "echo",
  description: "Echo the text.",
  inputSchema: z.object({ text: z.string() }),
  outputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ text }),
});
const factory = createPleachMcpServerFactory({ tools: [echo], structuredOutput: true });
const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "origin-test", version: "1.0.0" },
  },
});

let server: McpHttpServer;
let allowing: McpHttpServer;

beforeAll(async () => {
  server = await startMcpHttpServer({ factory, token });
  allowing = await startMcpHttpServer({
    factory,
    token,
    allowedHosts: ["mcp.internal", ".example.test"],
  });
});

afterAll(async () => {
  await server?.close();
  await allowing?.close();
});

/** POST an `initialize` with exactly these headers (and the token unless `token: false`). */
function post({
  to = server.url,
  host,
  origin,
  token: withToken = true,
}: {
  to?: URL;
  host: string;
  origin?: string;
  token?: boolean;
}): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = {
    host,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (origin !== undefined) headers.origin = origin;
  if (withToken) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: to.hostname,
        port: to.port,
        path: to.pathname,
        method: "POST",
        headers,
        agent: false,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on("error", reject);
    request.end(initialize);
  });
}

describe("MCP HTTP server Host and Origin checks", () => {
  it("answers requests addressed to loopback, with any port or none", async () => {
    const port = server.url.port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      "localhost",
      "127.1.2.3:80",
      "[::1]:8931",
    ]) {
      const answer = await post({ host });
      expect(answer.status, host).toBe(200);
      expect(answer.body, host).toContain('"protocolVersion"');
    }
    const browser = await post({ host: "localhost", origin: `http://127.0.0.1:${port}` });
    expect(browser.status).toBe(200);
  });

  it("refuses a foreign Host with 403 and the reason, before the token", async () => {
    for (const withToken of [true, false]) {
      const answer = await post({ host: "evil.example.com", token: withToken });
      expect(answer.status).toBe(403);
      const body = JSON.parse(answer.body);
      expect(body).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          data: {
            refused: "Host",
            value: "evil.example.com",
            allowWith: "--allow-host evil.example.com",
          },
        },
      });
      expect(body.error.message).toMatch(/refused Host "evil\.example\.com"/);
      expect(body.error.message).toMatch(/start the server with --allow-host evil\.example\.com/);
    }
    expect((await post({ host: "localhost", token: false })).status).toBe(401);
  });

  it("refuses a foreign Origin with 403 even when the Host is loopback", async () => {
    const answer = await post({
      host: `localhost:${server.url.port}`,
      origin: "http://evil.example.com",
    });
    expect(answer.status).toBe(403);
    const { error } = JSON.parse(answer.body);
    expect(error.data).toMatchObject({ refused: "Origin", value: "http://evil.example.com" });
    expect(error.message).toMatch(/browser page from evil\.example\.com/);
  });

  it("accepts the hosts given in allowedHosts, in Host and in Origin", async () => {
    for (const host of ["mcp.internal:8931", "example.test", "a.example.test:443"]) {
      expect((await post({ to: allowing.url, host })).status, host).toBe(200);
      const origin = `https://${host}`;
      expect((await post({ to: allowing.url, host: "localhost", origin })).status, host).toBe(200);
    }
    expect((await post({ to: allowing.url, host: "other.internal" })).status).toBe(403);
    expect((await post({ host: "mcp.internal" })).status).toBe(403);
    await expect(
      startMcpHttpServer({ factory, token, allowedHosts: ["http://mcp.internal"] }),
    ).rejects.toThrow(/without a scheme/);
  });

  it("still serves the MCP client, which sends the Host of its URL", async () => {
    const client = new Client({ name: "origin-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(server.url, {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(result.structuredContent).toEqual({ text: "hi" });
    } finally {
      await client.close();
    }
  });
});

describe("pleach mcp --allow-host", () => {
  it("refuses a host with a port, and the flag without --http", async () => {
    const env = { PLEACH_MCP_TOKEN: token };
    const withPort = await runCli(["mcp", "--http", "0", "--allow-host", "a.test:80"], { env });
    expect(withPort.code).toBe(2);
    expect(withPort.stderr).toMatch(/--allow-host: "a\.test:80" is not a host to allow/);
    const stdio = await runCli(["mcp", "--allow-host", "a.test"], { env });
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toMatch(/--allow-host applies to --http only/);
    const help = await runCli(["mcp", "--help"]);
    expect(help.stdout).toMatch(/--allow-host NAME/);
  });

  describe("a running server given two hosts", () => {
    const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");
    let child: ChildProcess;
    let url: URL;
    let cleanup: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      const workspace = await makeTempDir("pleach-mcp-allow-host-");
      cleanup = workspace.cleanup;
      child = spawn(
        process.execPath,
        [
          launcher,
          ...["mcp", "--workspace", workspace.dir, "--http", "127.0.0.1:0"],
          ...["--allow-host", "mcp.internal", "--allow-host", ".example.test"],
        ],
        { env: { ...process.env, PLEACH_MCP_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] },
      );
      url = await servedUrl(child);
    });

    afterAll(async () => {
      if (child?.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      await cleanup?.();
    });

    it("accepts both and loopback, and refuses others", async () => {
      expect((await post({ to: url, host: "mcp.internal:9000" })).status).toBe(200);
      expect((await post({ to: url, host: "b.example.test" })).status).toBe(200);
      expect((await post({ to: url, host: url.host })).status).toBe(200);
      const refused = await post({ to: url, host: "localhost", origin: "http://other.test" });
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body).error.data.allowWith).toBe("--allow-host other.test");
    });
  });
});
