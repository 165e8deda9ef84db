// `pleach mcp --diagnostics types` end to end: the built bin, driven over stdio by the MCP SDK's
// client, with the language servers of pleach's optional dependencies (installed in the
// monorepo) run in the workspace's session sandbox. Needs the build (`npm test` builds first).
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { describe, expect, it, onTestFinished } from "vitest";
import { runCli } from "./test-support/run-cli.js";
import { bundledTypeServers } from "./type-servers.js";

const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");
const probe = await createLocalSandbox({ root: process.cwd(), session: true });
const sessions = probe.jobs !== undefined && probe.backend === "bubblewrap";
await probe.close();
const bundled = bundledTypeServers();
const skipReason = !sessions
  ? "no session sandbox here; needs bubblewrap and /usr/bin/perl"
  : bundled.readFolders.length < 3
    ? "pleach's optional dependencies (typescript-language-server, typescript, pyright) are not installed"
    : undefined;

describe("pleach mcp --diagnostics", () => {
  it("takes syntax or types, and says so for anything else", async () => {
    const result = await runCli(["mcp", "--diagnostics", "lint"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--diagnostics takes syntax or types (e.g. --diagnostics types), got "lint"',
    );
  });

  it.skipIf(skipReason !== undefined)(
    `types: an edit's result names the type error it made, from pleach's own servers${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
    async () => {
      const root = await useTempDir("pleach-mcp-types-");
      await writeFile(path.join(root, "count.ts"), "export const count: number = 1;\n");
      const client = new Client({ name: "pleach-types-e2e", version: "1.0.0" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [launcher, "mcp", "--workspace", root, "--diagnostics", "types"],
          stderr: "pipe",
        }),
      );
      onTestFinished(() => client.close());
      // A first edit starts the server; under a heavy load its start may take longer than the
      // 30 s a check waits for it (the result then says so), and the server goes on starting.
      await writeFile(path.join(root, "warm.ts"), "export const warm = 1;\n");
      await client.callTool({
        name: "edit_file",
        arguments: { path: "warm.ts", old: "= 1;", new: "= 2;" },
      });
      const result = await client.callTool({
        name: "edit_file",
        arguments: { path: "count.ts", old: "= 1;", new: '= "one";' },
      });
      const [content] = result.content as { type: string; text: string }[];
      expect(content?.text).toBe(
        [
          "edited count.ts (1 replacement at line 1)",
          "Type check (TypeScript): the change introduced 1 type error in count.ts: line 1: Type 'string' is not assignable to type 'number'. (TS2322); fix it before running the code.",
        ].join("\n"),
      );
    },
    120_000,
  );
});
