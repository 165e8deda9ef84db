// `pleach mcp --http --token-file FILE`: the token file is out of reach of the tools it serves,
// commands and file tools alike, also when it lies in the workspace (the path a user is most
// likely to give: `--token-file .mcp-token`).
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { servedUrl } from "./test-support/served-url.js";

const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");
const token = "token-file-secret-0123456789";

let server: ChildProcess;
let url: URL;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const workspace = await makeTempDir("pleach-mcp-token-");
  cleanup = workspace.cleanup;
  await writeFile(path.join(workspace.dir, ".mcp-token"), `${token}\n`, { mode: 0o600 });
  // Given relative to the folder the server starts in, as a user types it.
  server = spawn(
    process.execPath,
    [launcher, "mcp", "--workspace", ".", "--http", "0", "--token-file", ".mcp-token"],
    { cwd: workspace.dir, stdio: ["ignore", "ignore", "pipe"] },
  );
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

it("hides the token file from the commands and the file tools it serves", async () => {
  const client = new Client({ name: "pleach-token", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  try {
    const texts: string[] = [];
    for (const [name, args] of [
      ["bash", { command: 'cat .mcp-token; cat "$PWD/.mcp-token"; ln .mcp-token t2 && cat t2' }],
      ["read_file", { path: ".mcp-token" }],
      ["search_files", { pattern: "secret" }],
    ] as const) {
      const result = await client.callTool({ name, arguments: args });
      texts.push(JSON.stringify(result.content));
    }
    for (const text of texts) expect(text).not.toContain(token);
  } finally {
    await client.close();
  }
});
