// End to end: `pleach mcp` runs as a child process (the built bin) and the official clients of
// both MCP SDK lines drive it over stdio. Needs the build (`npm test` builds first).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { renderToolResult } from "@pleach/core";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detachedTools } from "./cli-support.js";

const run = promisify(execFile);
const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");

/** What the tests need of a client, the same for both SDK lines. */
interface TestClient {
  listTools(): Promise<{ tools: ListedTool[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<CallResult>;
  close(): Promise<void>;
}
interface ListedTool {
  name: string;
  title?: string;
  inputSchema: { type: string; properties?: Record<string, unknown> };
  outputSchema?: { type: string; properties?: Record<string, unknown> };
  annotations?: Record<string, unknown>;
}
interface CallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

const sdks = {
  "v2 @modelcontextprotocol/client": async (args: string[]): Promise<TestClient> => {
    const client = new ClientV2({ name: "pleach-e2e", version: "1.0.0" });
    await client.connect(
      new StdioTransportV2({
        command: process.execPath,
        args: [launcher, ...args],
        stderr: "pipe",
      }),
    );
    return client as unknown as TestClient;
  },
  "v1 @modelcontextprotocol/sdk": async (args: string[]): Promise<TestClient> => {
    const client = new ClientV1({ name: "pleach-e2e", version: "1.0.0" });
    await client.connect(
      new StdioTransportV1({
        command: process.execPath,
        args: [launcher, ...args],
        stderr: "pipe",
      }),
    );
    return client as unknown as TestClient;
  },
};

function never(): never {
  throw new Error("missing");
}

function text(result: CallResult): string {
  return result.content.map((block) => block.text ?? "").join("");
}

async function git(cwd: string, ...args: string[]) {
  await run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });
}

describe.each(Object.entries(sdks))("pleach mcp over stdio, %s", (_sdk, connect) => {
  let root: string;
  let upstream: string;
  let client: TestClient;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    if (!existsSync(path.resolve(import.meta.dirname, "../dist/main.js"))) {
      throw new Error("pleach is not built: run `npx tsc -b` (npm test does it) first");
    }
    const workspace = await makeTempDir("pleach-mcp-");
    cleanups.push(workspace.cleanup);
    root = workspace.dir;
    // Inside the workspace: sandboxed commands see a private /tmp, not the host's.
    upstream = path.join(root, "upstream");
    await mkdir(upstream);
    await writeFile(path.join(root, "hello.txt"), "hello world\n");
    await mkdir(path.join(root, "src"));
    await writeFile(path.join(root, "src", "a.ts"), "export const a = 1;\n");
    await git(root, "init", "-q");
    await git(root, "add", "hello.txt", "src");
    await git(root, "commit", "-qm", "start");
    await writeFile(path.join(upstream, "README.md"), "upstream\n");
    await git(upstream, "init", "-q", "-b", "main");
    await git(upstream, "add", ".");
    await git(upstream, "commit", "-qm", "upstream");
    // The JSON for programs, beside the text (the model-facing default is the text alone).
    client = await connect(["mcp", "--workspace", root, "--structured-output"]);
  });

  afterAll(async () => {
    await client?.close();
    for (const cleanup of cleanups) await cleanup();
  });

  it("lists the fourteen tools with object output schemas and the spec's annotations", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // pleach mcp is a session: its sandbox keeps background jobs, so the job tools are served.
    expect([...byName.keys()].sort()).toEqual([
      "apply_diff",
      "bash",
      "edit_file",
      "git_clone",
      "git_diff",
      "job_input",
      "job_kill",
      "job_list",
      "job_output",
      "list_files",
      "read_file",
      "run_tests",
      "search_files",
      "write_file",
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
    }
    for (const name of ["read_file", "list_files", "search_files", "git_diff", "job_output"]) {
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: true });
    }
    expect(byName.get("job_list")?.annotations).toMatchObject({ readOnlyHint: true });
    for (const name of ["edit_file", "write_file", "apply_diff", "bash", "job_kill"]) {
      expect(byName.get(name)?.annotations).toMatchObject({ destructiveHint: true });
    }
    expect(byName.get("git_clone")?.annotations).toMatchObject({ openWorldHint: true });
    // Every tool has a title for a host to show.
    for (const tool of tools) expect(tool.title, tool.name).toEqual(expect.any(String));
    // Array outputs travel wrapped, so structuredContent is always an object.
    expect(byName.get("list_files")?.outputSchema).toMatchObject({
      type: "object",
      required: ["result"],
      properties: { result: { type: "array" } },
    });
  });

  it("calls every tool and returns structuredContent plus the model-facing text", async () => {
    const tools = new Map(detachedTools().map((tool) => [tool.name, tool]));
    const calls: Array<[string, Record<string, unknown>, (result: CallResult) => void]> = [
      [
        "read_file",
        { path: "hello.txt" },
        (result) => expect(result.structuredContent).toMatchObject({ content: "hello world\n" }),
      ],
      [
        "list_files",
        { dir: "src" },
        (result) =>
          expect(result.structuredContent).toEqual({
            result: [{ path: "src/a.ts", kind: "file", size: 20 }],
          }),
      ],
      [
        "search_files",
        { pattern: "hello" },
        (result) =>
          expect(result.structuredContent?.result).toEqual([
            expect.objectContaining({ path: "hello.txt", line: 1 }),
          ]),
      ],
      [
        "write_file",
        { path: "notes/n.txt", content: "one\ntwo\n" },
        (result) => expect(result.structuredContent).toMatchObject({ bytesWritten: 8 }),
      ],
      [
        "edit_file",
        { path: "notes/n.txt", old: "two", new: "three" },
        (result) => expect(result.structuredContent).toMatchObject({ replacements: 1 }),
      ],
      [
        "apply_diff",
        {
          path: "src/a.ts",
          diff: "--- src/a.ts\n+++ src/a.ts\n@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;\n",
        },
        (result) =>
          expect(result.structuredContent).toMatchObject({ hunksApplied: 1, conflicts: [] }),
      ],
      [
        "bash",
        { command: "cat notes/n.txt" },
        (result) => expect(result.structuredContent).toMatchObject({ output: "one\nthree\n" }),
      ],
      [
        "run_tests",
        { command: "echo 'ok 1 - works'" },
        (result) => expect(result.structuredContent).toMatchObject({ exitCode: 0 }),
      ],
      [
        "git_diff",
        { cwd: "." },
        (result) =>
          expect(result.structuredContent).toMatchObject({
            files: [{ path: "src/a.ts", additions: 1, deletions: 1 }],
          }),
      ],
      [
        "git_clone",
        { url: upstream, dest: "vendor/up" },
        (result) =>
          expect(result.structuredContent).toMatchObject({
            branch: "main",
            commitSha: expect.stringMatching(/^[0-9a-f]{40}$/),
          }),
      ],
    ];
    for (const [name, args, check] of calls) {
      const result = await client.callTool({ name, arguments: args });
      expect({ name, text: text(result), isError: result.isError }).toMatchObject({
        name,
        isError: false,
      });
      check(result);
      // The text is the output rendered for a model (array outputs travel wrapped).
      const output = Array.isArray(result.structuredContent?.result)
        ? result.structuredContent.result
        : result.structuredContent;
      const rendered = tools.get(name)?.toModelOutput(output as never);
      expect(rendered).toBeDefined();
      if (rendered !== undefined) {
        expect(text(result)).toBe(renderToolResult({ ok: true, result: rendered }).output);
      }
    }
    expect(await readFile(path.join(root, "vendor/up/README.md"), "utf8")).toBe("upstream\n");
  });

  it("runs a server as a background job that a foreground command reaches, then kills it", async () => {
    const tools = new Map(detachedTools().map((tool) => [tool.name, tool]));
    /** Call `name`; its text must be the output rendered for a model, as on every face. */
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      const rendered = tools.get(name)?.toModelOutput(result.structuredContent as never);
      expect({ name, isError: result.isError }).toEqual({ name, isError: false });
      expect(text(result)).toBe(renderToolResult({ ok: true, result: rendered ?? never() }).output);
      return { output: result.structuredContent ?? never(), text: text(result) };
    };
    await writeFile(
      path.join(root, "server.cjs"),
      "require('node:http').createServer((request, response) => response.end('pong')).listen(0, '127.0.0.1', function () { console.log('listening on ' + this.address().port); });\n",
    );
    const started = await call("bash", { command: "node server.cjs", background: true });
    const jobId = started.output.jobId as string;
    expect(started.output).toMatchObject({ state: "running" });
    const listening = await call("job_output", {
      jobId,
      until: "listening on \\d+",
      waitMs: 30_000,
    });
    expect(listening.output).toMatchObject({ matched: true, state: "running" });
    const port = /listening on (\d+)/.exec(listening.output.output as string)?.[1];
    const fetched = await call("bash", {
      command: `node -e "fetch('http://127.0.0.1:${port}').then((r) => r.text()).then(console.log)"`,
    });
    expect(fetched.output).toMatchObject({ output: "pong\n", exitCode: 0 });
    expect((await call("job_list", {})).text).toContain(`[job ${jobId} running] `);
    const killed = await call("job_kill", { jobId });
    expect(killed.text).toMatch(new RegExp(`^\\[job ${jobId} killed`));
    const unknown = await client.callTool({ name: "job_output", arguments: { jobId: "nope" } });
    expect(unknown).toMatchObject({ isError: true, _meta: { "pleach/errorCode": "NOT_FOUND" } });
    expect(text(unknown)).toContain("job_list lists its jobs");
  });

  it("reports bad input as an isError result naming each wrong field", async () => {
    const result = await client.callTool({ name: "read_file", arguments: { path: 5 } });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatchInlineSnapshot(`
      "read_file got invalid input:
      - path: Invalid input: expected string, received number"
    `);
    expect(result._meta).toMatchObject({ "pleach/errorCode": "INVALID_INPUT" });
  });

  it("refuses path escapes with a model-readable message", async () => {
    for (const outside of ["../outside.txt", "/etc/passwd"]) {
      const result = await client.callTool({ name: "read_file", arguments: { path: outside } });
      expect(result.isError).toBe(true);
      expect(result._meta).toMatchObject({ "pleach/errorCode": "PATH_ESCAPE" });
      expect(text(result)).toContain("path escapes the workspace");
    }
    const write = await client.callTool({
      name: "write_file",
      arguments: { path: "../x.txt", content: "x" },
    });
    expect(write).toMatchObject({ isError: true, _meta: { "pleach/errorCode": "PATH_ESCAPE" } });
  });

  it("answers an unknown tool with a protocol error that lists the tools", async () => {
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toThrow(
      /there is no tool named "nope"; the tools are: read_file/,
    );
  });

  it("refuses every write in read-only mode and serves only --tools", async () => {
    const readOnly = await connect([
      "mcp",
      "--workspace",
      root,
      "--mode",
      "read-only",
      "--tools",
      "read_file,write_file,edit_file",
    ]);
    try {
      const { tools } = await readOnly.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["read_file", "write_file", "edit_file"]);
      const write = await readOnly.callTool({
        name: "write_file",
        arguments: { path: "new.txt", content: "x" },
      });
      expect(write).toMatchObject({ isError: true, _meta: { "pleach/errorCode": "READ_ONLY" } });
      const edit = await readOnly.callTool({
        name: "edit_file",
        arguments: { path: "hello.txt", old: "hello", new: "bye" },
      });
      expect(edit).toMatchObject({ isError: true, _meta: { "pleach/errorCode": "READ_ONLY" } });
      expect(await readFile(path.join(root, "hello.txt"), "utf8")).toBe("hello world\n");
      const read = await readOnly.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
      expect(read.isError).toBe(false);
    } finally {
      await readOnly.close();
    }
  });
});
