// The Claude Desktop bundle as Claude Desktop gets it: built by scripts/build-mcpb.sh, unpacked,
// its manifest valid against the MCP Bundle 0.3 schema of @anthropic-ai/mcpb, and its server
// started the way the manifest says, answering initialize and tools/list over stdio.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { VERSIONED_MANIFEST_SCHEMAS } from "@anthropic-ai/mcpb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CODING_AGENT_TOOL_NAMES } from "@pleach/coding-agent/tools";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, "../../..");

describe("pleach.mcpb", { timeout: 300_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it("unpacks to a valid manifest whose server starts and lists the tools", async () => {
    const temp = await makeTempDir("pleach-mcpb-");
    cleanups.push(temp.cleanup);
    const bundle = path.join(temp.dir, "pleach.mcpb");
    await run("bash", [path.join(repo, "scripts/build-mcpb.sh"), bundle], { cwd: repo });
    const unpacked = path.join(temp.dir, "unpacked");
    await run("/usr/bin/unzip", ["-q", bundle, "-d", unpacked]);

    const manifest = JSON.parse(await readFile(path.join(unpacked, "manifest.json"), "utf8"));
    const parsed = VERSIONED_MANIFEST_SCHEMAS["0.3"].safeParse(manifest);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);

    // What Claude Desktop runs: the manifest's command and args, its placeholders filled in.
    const workspace = path.join(temp.dir, "workspace");
    await run("mkdir", ["-p", workspace]);
    const values: Record<string, string> = {
      __dirname: unpacked,
      "user_config.workspace": workspace,
      "user_config.mode": "read-only",
    };
    const fill = (arg: string) =>
      arg.replace(/\$\{([\w.]+)\}/g, (whole, key: string) => values[key] ?? whole);
    const { command, args } = manifest.server.mcp_config as { command: string; args: string[] };
    const client = new Client({ name: "claude-desktop-stand-in", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: command === "node" ? process.execPath : command,
        args: args.map(fill),
        stderr: "ignore",
      }),
    );
    try {
      expect(client.getServerVersion()?.name).toBe("pleach");
      const { tools } = await client.listTools();
      expect(tools.map(({ name }) => name).sort()).toEqual([...CODING_AGENT_TOOL_NAMES].sort());
    } finally {
      await client.close();
    }
  });
});
