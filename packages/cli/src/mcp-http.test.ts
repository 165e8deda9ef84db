// End to end: `pleach mcp --http` runs as a child process on loopback and the official clients of
// both MCP SDK lines call it over Streamable HTTP with the bearer token.
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CODING_AGENT_TOOL_NAMES } from "@pleach/coding-agent/tools";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { servedUrl } from "./test-support/served-url.js";

const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");
const token = "test-token-0123456789abcdef";

let server: ChildProcess;
let url: URL;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const workspace = await makeTempDir("pleach-mcp-http-");
  cleanup = workspace.cleanup;
  await writeFile(path.join(workspace.dir, "hello.txt"), "hello over http\n");
  const args = ["mcp", "--workspace", workspace.dir, "--http", "0", "--progress-interval", "0.3"];
  server = spawn(process.execPath, [launcher, ...args], {
    env: { ...process.env, PLEACH_MCP_TOKEN: token },
    stdio: ["ignore", "ignore", "pipe"],
  });
  url = await servedUrl(server);
});

afterAll(async () => {
  if (server.exitCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  await cleanup?.();
});

describe("pleach mcp --http", () => {
  it("binds to loopback by default and refuses requests without the token", async () => {
    expect(url.hostname).toBe("127.0.0.1");
    expect(url.pathname).toBe("/mcp");
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    for (const authorization of [undefined, "Bearer wrong", `Basic ${token}`, `Bearer ${token}x`]) {
      const response = await fetch(url, {
        method: "POST",
        body,
        headers: authorization === undefined ? headers : { ...headers, authorization },
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
    }
  });

  it("serves the v2 client", async () => {
    const client = new ClientV2({ name: "pleach-e2e", version: "1.0.0" });
    await client.connect(
      new HttpTransportV2(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(CODING_AGENT_TOOL_NAMES.length);
      const result = await client.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
      expect(result.structuredContent).toBeUndefined();
      expect(result.content).toEqual([{ type: "text", text: "hello over http\n" }]);
      // A long call's progress arrives on the request's own event stream.
      const updates: Array<{ progress: number; message?: string }> = [];
      const slept = await client.callTool(
        { name: "bash", arguments: { command: "sleep 1.2" } },
        { onprogress: (update) => updates.push(update) },
      );
      expect(slept.isError).toBe(false);
      expect(updates.length).toBeGreaterThanOrEqual(2);
      expect(updates[0]?.message).toBe("bash running… 0s");
      const refused = await client.callTool({ name: "read_file", arguments: { path: "../x" } });
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("serves the v1 client", async () => {
    const client = new ClientV1({ name: "pleach-e2e", version: "1.0.0" });
    await client.connect(
      new HttpTransportV1(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(CODING_AGENT_TOOL_NAMES.length);
      const result = await client.callTool({ name: "list_files", arguments: { dir: "." } });
      expect(result.content).toEqual([
        { type: "text", text: expect.stringMatching(/^hello\.txt {2}\(16 bytes\)$/m) },
      ]);
    } finally {
      await client.close();
    }
  });
});
