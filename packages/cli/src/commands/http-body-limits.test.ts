// Both servers `--http` starts refuse a request body over their limit with a 413 that names the
// limit and its size: `pleach mcp --http` (4 MiB, as a JSON-RPC error) and `pleach sandbox serve`
// (--max-request-bytes, as the protocol's error body). Loopback only.
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIo } from "../cli-support.js";
import { servedUrl } from "../test-support/served-url.js";
import { sandboxCommand } from "./sandbox.js";

const launcher = path.resolve(import.meta.dirname, "../../bin/pleach.js");
const token = "body-limits-token-0123456789abcdef";
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A body of `bytes` bytes sent chunked, with no Content-Length to refuse it by. */
function chunked(bytes: number): { body: ReadableStream<Uint8Array>; duplex: "half" } {
  let left = bytes;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = Math.min(left, 64 * 1024);
      left -= size;
      if (size === 0) controller.close();
      else controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
  return { body, duplex: "half" };
}

async function startMcpHttp(): Promise<URL> {
  const workspace = await makeTempDir("pleach-body-limits-mcp-");
  cleanups.push(workspace.cleanup);
  const server: ChildProcess = spawn(
    process.execPath,
    [launcher, "mcp", "--workspace", workspace.dir, "--http", "0"],
    { env: { ...process.env, PLEACH_MCP_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] },
  );
  cleanups.push(async () => {
    if (server.exitCode !== null) return;
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  });
  return await servedUrl(server);
}

describe("pleach mcp --http", () => {
  it("answers a body over 4 MiB with a JSON-RPC error naming the limit, its size and the body's", async () => {
    const url = await startMcpHttp();
    const headers = {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const declared = await fetch(url, { method: "POST", headers, body: " ".repeat(5_000_000) });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32000,
        message:
          "the request body (5,000,000 bytes) is larger than this server's limit of 4,194,304 bytes (4 MiB) on request bodies; send less in one request (large content in several smaller writes)",
      },
    });
    // Without a Content-Length, refused as the count passes the limit.
    const streamed = await fetch(url, { method: "POST", headers, ...chunked(5_000_000) });
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { error: { message: string } }).error.message).toMatch(
      /^the request body is larger than this server's limit of 4,194,304 bytes \(4 MiB\) on request bodies;/,
    );
    // A body under the limit is served.
    const listed = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "body-limits", version: "1.0.0" },
        },
      }),
    });
    expect(listed.status).toBe(200);
  }, 30_000);
});

function captureIo(cwd: string): CliIo & { out: string[] } {
  const out: string[] = [];
  return {
    out,
    cwd,
    stdout: (text) => out.push(text),
    stderr: () => {},
    readStdin: async () => undefined,
  };
}

describe("pleach sandbox serve", () => {
  it("answers a body over --max-request-bytes with 413 TOO_LARGE naming the limit and its size", async () => {
    const folder = await makeTempDir("pleach-body-limits-sandbox-");
    cleanups.push(folder.cleanup);
    await writeFile(path.join(folder.dir, "token"), `${token}\n`);
    const io = captureIo(folder.dir);
    const stop = new AbortController();
    const running = sandboxCommand({
      args: [
        ...["serve", "--root", "boxes", "--listen", "127.0.0.1:0", "--token-file", "token"],
        ...["--max-request-bytes", "1024"],
      ],
      io,
      stopSignal: stop.signal,
    });
    cleanups.push(async () => {
      stop.abort();
      expect(await running).toBe(0);
    });
    await expect.poll(() => io.out.length, { timeout: 5_000 }).toBe(1);
    const base = new URL((io.out[0] as string).trim());
    const authorization = `Bearer ${token}`;
    const created = await fetch(new URL("/v1/sandboxes", base), {
      method: "POST",
      headers: { authorization },
    });
    const { id } = (await created.json()) as { id: string };
    const file = new URL(`/v1/sandboxes/${id}/file?path=big.txt`, base);
    const fileHeaders = { authorization, "content-type": "application/octet-stream" };

    const write = await fetch(file, {
      method: "PUT",
      headers: fileHeaders,
      body: "x".repeat(2_000),
    });
    expect(write.status).toBe(413);
    expect(await write.json()).toEqual({
      error: {
        code: "TOO_LARGE",
        message:
          "the request body (2,000 bytes) is larger than this server's limit of 1,024 bytes (1 KiB) on request bodies, set by --max-request-bytes (maxRequestBytes); write big files in parts or raise --max-request-bytes",
        details: {
          limit: "request-body",
          maxBytes: 1024,
          bytes: 2_000,
          setting: "--max-request-bytes (maxRequestBytes)",
        },
      },
    });
    const exec = await fetch(new URL(`/v1/sandboxes/${id}/exec`, base), {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      ...chunked(2_000),
    });
    expect(exec.status).toBe(413);
    expect(await exec.json()).toMatchObject({
      error: {
        code: "TOO_LARGE",
        message: expect.stringMatching(
          /^the request body is larger than this server's limit of 1,024 bytes \(1 KiB\) on request bodies, set by --max-request-bytes/,
        ),
        details: { limit: "request-body", maxBytes: 1024 },
      },
    });
    // Under the limit, the same write goes through.
    const small = await fetch(file, {
      method: "PUT",
      headers: fileHeaders,
      body: "x".repeat(1_024),
    });
    expect(small.status).toBe(204);
  }, 30_000);
});
