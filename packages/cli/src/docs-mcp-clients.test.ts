// docs/mcp-clients.md holds a setup per client: every config block in it must start `pleach mcp`
// with flags `pleach mcp` accepts, and does: the documented command line (run from this checkout,
// the workspace placeholder filled in) and env serve initialize, tools/list and a call to a real
// MCP client (@modelcontextprotocol/sdk v1). The real-client tests must run their CLI with the
// doc's own block rather than a config of their own. Needs the build (`npm test` builds first).
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import {
  type DocBlock,
  docBlocks,
  localServer,
  parseBlock,
} from "../real-clients/documented-config.js";
import { parseCommandLine } from "./cli-support.js";
import { MCP_HELP, MCP_OPTIONS } from "./commands/mcp.js";

const CLIENTS = [
  "Claude Code",
  "Claude Desktop",
  "Codex",
  "Gemini CLI",
  "Copilot CLI",
  "Cursor",
  "VS Code",
  "opencode",
  "Zed",
];
/** The real-client test of each CLI the suite runs. */
const TESTED = {
  "Claude Code": "claude-code.test.ts",
  Codex: "codex.test.ts",
  "Gemini CLI": "gemini-cli.test.ts",
  "Copilot CLI": "copilot-cli.test.ts",
  opencode: "opencode.test.ts",
};

/** A server a config names: its command line and the environment it sets (`env`, opencode's `environment`). */
interface DocumentedServer {
  line: string[];
  env: Record<string, string>;
}

/** Every server a parsed config names: `command` with `args`, or opencode's array. */
function documentedServers(value: unknown): DocumentedServer[] {
  if (Array.isArray(value)) return value.flatMap(documentedServers);
  if (typeof value !== "object" || value === null) return [];
  const entry = value as Record<string, unknown>;
  const env = (entry.env ?? entry.environment ?? {}) as Record<string, string>;
  if (typeof entry.command === "string" && Array.isArray(entry.args)) {
    return [{ line: [entry.command, ...(entry.args as string[])], env }];
  }
  if (Array.isArray(entry.command)) return [{ line: entry.command as string[], env }];
  return Object.values(entry).flatMap(documentedServers);
}

/** The servers a block names: a shell block's `claude mcp add` line, or a config's entries. */
function blockServers(block: DocBlock): DocumentedServer[] {
  return block.lang === "sh"
    ? [{ line: shellCommandLine(block.text), env: {} }]
    : documentedServers(parseBlock(block));
}

/** The words after `--` of a `claude mcp add` line: the server's command line. */
function shellCommandLine(text: string): string[] {
  const words = text.trim().split(/\s+/);
  return words.slice(words.indexOf("--") + 1);
}

/** The flags after `npx -y @pleach/cli mcp`, or why the line is not that. */
function mcpFlags(line: string[]): string[] {
  expect(line.slice(0, 4)).toEqual(["npx", "-y", "@pleach/cli", "mcp"]);
  return line.slice(4);
}

describe("docs/mcp-clients.md", () => {
  const blocks = docBlocks();

  it("has a section with a config block for every client", () => {
    for (const client of CLIENTS) {
      expect(
        blocks.some((block) => block.section === client),
        `a block for ${client}`,
      ).toBe(true);
    }
  });

  it.for(
    blocks.map(
      (block, index) => [`${index + 1}. ${block.section} (${block.lang})`, block] as const,
    ),
  )("%s names `pleach mcp` with flags it accepts", ([, block]) => {
    const servers = blockServers(block);
    expect(servers).toHaveLength(1);
    for (const { line } of servers) {
      const flags = mcpFlags(line);
      const { values, positionals } = parseCommandLine({
        args: flags,
        options: MCP_OPTIONS,
        command: "mcp",
      });
      expect(positionals).toEqual([]);
      for (const flag of flags.filter((word) => word.startsWith("--"))) {
        expect(MCP_HELP).toContain(flag);
      }
      const budget = values["max-result-chars"];
      if (budget !== undefined) {
        expect(Number(budget)).toBeGreaterThanOrEqual(2_000);
        expect(Number(budget)).toBeLessThanOrEqual(10_000_000);
      }
    }
  });

  it.for(
    blocks.map(
      (block, index) => [`${index + 1}. ${block.section} (${block.lang})`, block] as const,
    ),
  )("%s starts pleach mcp, which answers initialize, tools/list and a call", async ([, block]) => {
    if (!existsSync(path.resolve(import.meta.dirname, "../dist/main.js"))) {
      throw new Error("pleach is not built: run `npx tsc -b` (npm test does it) first");
    }
    const root = await useTempDir("pleach-docs-mcp-clients-");
    await writeFile(path.join(root, "hello.txt"), "hello from the documented setup\n");
    const [{ line, env } = { line: [], env: {} }] = blockServers(block);
    const [command = "", ...args] = line;
    const server = localServer({ command, args }, root);
    const client = new Client({ name: "pleach-docs", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        ...server,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
        stderr: "pipe",
      }),
    );
    try {
      expect(client.getServerVersion()?.name).toBe("pleach");
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("read_file");
      const result = await client.callTool({
        name: "read_file",
        arguments: { path: "hello.txt" },
      });
      expect(result.isError).toBe(false);
      expect(result.content).toEqual([{ type: "text", text: "hello from the documented setup\n" }]);
    } finally {
      await client.close();
    }
  });

  it.for(Object.entries(TESTED))(
    "the %s real-client test runs the doc's block",
    ([client, file]) => {
      const source = readFileSync(
        path.resolve(import.meta.dirname, "../real-clients", file),
        "utf8",
      );
      expect(source).toContain(`documentedConfig("${client}"`);
    },
  );
});
