// What MCP adds to a tool call: a `tools/call read_file` round trip over stdio to `pleach mcp`
// (a child process, driven by the official v2 client) vs the same tool's `execute` called
// in-process on the same workspace, measured in one run. Calls are interleaved so drift (CPU
// frequency, page cache, other load) hits both rows alike.
//
// Run by hand after building: `npx tsc -b && node bench/mcp-roundtrip.mjs [calls]`.
// Goal: <= 2 ms added per call (median).
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createReadFileTool } from "../packages/coding-agent/dist/tools/read-file/tool.js";
import { createLocalSandbox } from "../packages/sandbox/dist/index.js";

const CALLS = Math.max(200, Number(process.argv[2] ?? 300));
const WARMUP = 20;
const launcher = new URL("../packages/cli/bin/pleach.js", import.meta.url).pathname;

const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-mcp-")));
let client;
try {
  // A typical source file: 200 lines, about 8 KB.
  const line = `${"export const value = compute(alpha, beta, gamma);".padEnd(39, " ")}\n`;
  await writeFile(path.join(root, "src.ts"), line.repeat(200));
  const input = { path: "src.ts" };

  const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
  const readFile = createReadFileTool(sandbox);

  client = new Client({ name: "pleach-bench", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [launcher, "mcp", "--workspace", root, "--tools", "read_file"],
      stderr: "ignore",
    }),
  );
  await client.listTools();

  const direct = [];
  const overMcp = [];
  for (let call = 0; call < WARMUP + CALLS; call += 1) {
    let started = performance.now();
    const output = await readFile.execute(input);
    const directMs = performance.now() - started;

    started = performance.now();
    const result = await client.callTool({ name: "read_file", arguments: input });
    const mcpMs = performance.now() - started;

    if (
      result.isError ||
      result.structuredContent?.content !== output.content ||
      result.content[0]?.text !== readFile.toModelOutput(output).output
    ) {
      throw new Error(
        `the MCP result differs from the direct one: ${JSON.stringify(result).slice(0, 300)}`,
      );
    }
    if (call >= WARMUP) {
      direct.push(directMs);
      overMcp.push(mcpMs);
    }
  }

  const directMedian = median(direct);
  const mcpMedian = median(overMcp);
  const added = mcpMedian - directMedian;
  console.log(
    `read_file of ${line.length * 200} bytes, ${CALLS} interleaved calls each (Node ${process.version})`,
  );
  console.log(
    `  direct execute        median ${directMedian.toFixed(3)} ms  p90 ${percentile(direct, 0.9).toFixed(3)} ms`,
  );
  console.log(
    `  MCP tools/call stdio  median ${mcpMedian.toFixed(3)} ms  p90 ${percentile(overMcp, 0.9).toFixed(3)} ms`,
  );
  console.log(
    `  added by MCP          ${added.toFixed(3)} ms per call (${(mcpMedian / directMedian).toFixed(2)}x)  goal <= 2 ms: ${added <= 2 ? "met" : "NOT met"}`,
  );
} finally {
  await client?.close();
  await rm(root, { recursive: true, force: true });
}

function median(values) {
  return percentile(values, 0.5);
}

function percentile(values, fraction) {
  const sorted = [...values].sort((left, right) => left - right);
  const index = (sorted.length - 1) * fraction;
  const low = Math.floor(index);
  const high = Math.ceil(index);
  return sorted[low] + (sorted[high] - sorted[low]) * (index - low);
}
