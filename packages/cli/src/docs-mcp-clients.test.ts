// docs/mcp-clients.md holds a setup per client: every config block in it must start `pleach mcp`
// with flags `pleach mcp` accepts, and the real-client tests must run their CLI with the doc's own
// block rather than a config of their own.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { docBlocks, parseBlock } from "../real-clients/documented-config.js";
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
};

/** Every command line a parsed config names: `command` with `args`, or opencode's array. */
function commandLines(value: unknown): string[][] {
  if (Array.isArray(value)) return value.flatMap(commandLines);
  if (typeof value !== "object" || value === null) return [];
  const entry = value as Record<string, unknown>;
  if (typeof entry.command === "string" && Array.isArray(entry.args)) {
    return [[entry.command, ...(entry.args as string[])]];
  }
  if (Array.isArray(entry.command)) return [entry.command as string[]];
  return Object.values(entry).flatMap(commandLines);
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
    const lines =
      block.lang === "sh" ? [shellCommandLine(block.text)] : commandLines(parseBlock(block));
    expect(lines).toHaveLength(1);
    for (const line of lines) {
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
