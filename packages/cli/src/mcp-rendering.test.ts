// What an MCP host shows a model is what the runtime shows it: `pleach mcp` (the built bin, over
// stdio) is driven by the official clients of both SDK lines, and the `content` text of each call
// is compared with the same call run in-process through the runtime's toolset on the same
// workspace. Needs the build (`npm test` builds first).
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createToolset, type Toolset } from "@pleach/coding-agent/runtime";
import { createCodingAgentTools } from "@pleach/coding-agent/tools";
import { makeTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");

interface CallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}
interface TestClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<CallResult>;
  close(): Promise<void>;
}

const sdks = {
  "v2 @modelcontextprotocol/client": async (root: string): Promise<TestClient> => {
    const client = new ClientV2({ name: "pleach-rendering", version: "1.0.0" });
    await client.connect(
      new StdioTransportV2({
        command: process.execPath,
        args: [launcher, "mcp", "--workspace", root],
        stderr: "pipe",
      }),
    );
    return client as unknown as TestClient;
  },
  "v1 @modelcontextprotocol/sdk": async (root: string): Promise<TestClient> => {
    const client = new ClientV1({ name: "pleach-rendering", version: "1.0.0" });
    await client.connect(
      new StdioTransportV1({
        command: process.execPath,
        args: [launcher, "mcp", "--workspace", root],
        stderr: "pipe",
      }),
    );
    return client as unknown as TestClient;
  },
};

function text(result: CallResult): string {
  expect(result.content).toHaveLength(1);
  return result.content.map((block) => block.text ?? "").join("");
}

/** Two runs of a test suite differ in their timings only: those are blanked on both sides. */
function withoutTimings(output: string): string {
  return output
    .replace(/after \d+(\.\d+)? s/g, "after <t> s")
    .replace(/duration_ms:? [\d.]+/g, "duration_ms <t>");
}

describe.each(Object.entries(sdks))(
  "MCP results as the runtime renders them, %s",
  (_sdk, connect) => {
    let root: string;
    let client: TestClient;
    let toolset: Toolset;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      if (!existsSync(path.resolve(import.meta.dirname, "../dist/main.js"))) {
        throw new Error("pleach is not built: run `npx tsc -b` (npm test does it) first");
      }
      const workspace = await makeTempDir("pleach-mcp-rendering-");
      cleanup = workspace.cleanup;
      root = workspace.dir;
      await mkdir(path.join(root, "src"));
      const lines = Array.from(
        { length: 40 },
        (_, index) => `export const v${index} = "${index}";`,
      );
      await writeFile(path.join(root, "src", "values.ts"), `${lines.join("\n")}\n`);
      await writeFile(
        path.join(root, "src", "quote.ts"),
        'export const quote = "say \\"hi\\"\\n";\n\tindented();\n',
      );
      // A tiny test project: node's own test runner, one passing and one failing test.
      await writeFile(
        path.join(root, "math.test.mjs"),
        [
          'import assert from "node:assert/strict";',
          'import { test } from "node:test";',
          'test("adds", () => assert.equal(1 + 1, 2));',
          'test("subtracts", () => assert.equal(3 - 1, 1));',
          "",
        ].join("\n"),
      );
      client = await connect(root);
      const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
      toolset = createToolset(createCodingAgentTools(sandbox));
    });

    afterAll(async () => {
      await client?.close();
      await cleanup?.();
    });

    async function both(name: string, args: Record<string, unknown>) {
      const overMcp = await client.callTool({ name, arguments: args });
      const inProcess = await toolset.call(name, args, { cwd: root, sandbox: "workspace-write" });
      return { overMcp, inProcess };
    }

    it("read_file: the text with its continuation hint, not JSON", async () => {
      const { overMcp, inProcess } = await both("read_file", { path: "src/values.ts", limit: 5 });
      expect(text(overMcp)).toBe(inProcess.output);
      expect(overMcp.isError).toBe(inProcess.error);
      expect(text(overMcp)).toContain("call read_file again with offset 6 to continue");
      // Quotes, tabs and newlines arrive as they are in the file.
      const quote = await both("read_file", { path: "src/quote.ts" });
      expect(text(quote.overMcp)).toBe(quote.inProcess.output);
      expect(text(quote.overMcp)).toBe('export const quote = "say \\"hi\\"\\n";\n\tindented();\n');
      // No JSON beside it, which a client would show its model instead (--structured-output adds it).
      expect(overMcp.structuredContent).toBeUndefined();
    });

    it("search_files: the runtime's listing of matches", async () => {
      const { overMcp, inProcess } = await both("search_files", { pattern: "v1[0-2] =" });
      expect(inProcess.error).toBe(false);
      expect(text(overMcp)).toBe(inProcess.output);
      expect(overMcp.isError).toBe(false);
      expect(text(overMcp).split("\n")).toHaveLength(3);
    });

    it("a failed edit_file: the NO_MATCH message with the closest region, code in _meta", async () => {
      const args = { path: "src/values.ts", old: 'export const v3 = "three";', new: "x" };
      const { overMcp, inProcess } = await both("edit_file", args);
      expect(inProcess).toMatchObject({ error: true, code: "NO_MATCH" });
      expect(text(overMcp)).toBe(inProcess.output);
      expect(overMcp).toMatchObject({ isError: true, _meta: { "pleach/errorCode": "NO_MATCH" } });
    });

    it("a write that leaves a syntax error: the line that says so, or the refusal asked for", async () => {
      const content = "export const a = (1;\n";
      const args = { path: "src/broken.ts", content, rejectSyntaxErrors: true };
      const { overMcp, inProcess } = await both("write_file", args);
      expect(inProcess).toMatchObject({ error: true, code: "SYNTAX_ERROR" });
      expect(text(overMcp)).toBe(inProcess.output);
      expect(overMcp).toMatchObject({
        isError: true,
        _meta: { "pleach/errorCode": "SYNTAX_ERROR" },
      });
      const written = await client.callTool({
        name: "write_file",
        arguments: { path: "src/broken.ts", content },
      });
      expect(written.isError).toBe(false);
      expect(text(written)).toMatch(
        /\nThe write left a syntax error in src\/broken\.ts at line 1 \(.+\); fix it before running the code\.$/,
      );
    });

    it("run_tests with a failure: counts and failing names first; the call itself succeeded", async () => {
      const { overMcp, inProcess } = await both("run_tests", { command: "node --test" });
      expect(inProcess.error).toBe(true);
      // The tests failed, not the call: an isError result reaches some models as a JSON dump
      // (Gemini CLI), and the text says it first anyway.
      expect(overMcp.isError).toBe(false);
      expect(withoutTimings(text(overMcp))).toBe(withoutTimings(inProcess.output));
      expect(text(overMcp)).toMatch(/^exit code 1 after .*1 passed, 1 failed/);
      expect(text(overMcp)).toContain("failing tests:\n- subtracts");
    });
  },
);
