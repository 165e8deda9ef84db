// What Claude Code, the real CLI, hands its model from `pleach mcp`: Claude Code runs headless
// (`-p`) against a scripted model on 127.0.0.1 (ANTHROPIC_BASE_URL), with the built `pleach mcp`
// as its only MCP server; the script calls read_file on a 200 KB file, run_tests failing and
// passing, list_files recursive, search_files broad and a git commit the sandbox refuses, and
// records each tool_result Claude Code sends back. Each must be pleach's own text, with its hints,
// not JSON, and not spilled to a file or cut by the client: the same text the runtime renders for
// the same call.
//
// Out of the default run (it installs Claude Code and takes about a minute):
// `bash scripts/real-clients.sh`. Claude Code comes from the npm registry at a pinned version,
// its native binary included (an optional dependency, no other download), into a cache folder;
// PLEACH_CLAUDE_CODE names an installed `claude` instead. PLEACH_LAUNCHER names another pleach
// (an older build, to measure before and after).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { createToolset, type Toolset } from "@pleach/coding-agent/runtime";
import { createCodingAgentTools } from "@pleach/coding-agent/tools";
import { makeTempDir, useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentedConfig, localServer } from "./documented-config.js";
import {
  expectHints,
  extraFlags,
  installedClient,
  LONG_CALL,
  launcher,
  makeWorkspace,
  STEPS,
  withoutTimings,
} from "./fixture.js";
import {
  type RecordedResult,
  type ScriptedCall,
  startScriptedAnthropic,
} from "./scripted-anthropic.js";

const run = promisify(execFile);
const CLAUDE_CODE_VERSION = "2.1.332";
/** Claude Code's `claude`, installed once per version into a cache folder; or why it is not. */
const claudeCode = () =>
  installedClient({
    name: "Claude Code",
    packageName: "@anthropic-ai/claude-code",
    version: CLAUDE_CODE_VERSION,
    entry: "cli-wrapper.cjs",
    override: process.env.PLEACH_CLAUDE_CODE,
  });

const SCRIPT: Array<ScriptedCall & { name: string }> = STEPS.map((step) => ({
  ...step,
  tool: `mcp__pleach__${step.name}`,
}));

/**
 * The result without the note Claude Code appends to every tool result for its model (the
 * tokens left), which is the client's own and no cut of pleach's text.
 */
function withoutClientNote(text: string): string {
  return text.replace(
    /\n<system-reminder>\n<total_tokens>\d+ tokens left<\/total_tokens>\n<\/system-reminder>$/,
    "",
  );
}

/**
 * Run Claude Code headless on `script` in `root` with the documented server (its flags plus
 * `flags`) and `env` on top of the suite's own; what it sent its model, per step.
 */
async function runClaudeCode({
  command,
  root,
  script,
  flags = [],
  env = {},
}: {
  command: string[];
  root: string;
  script: Array<ScriptedCall & { name: string }>;
  flags?: string[];
  env?: Record<string, string>;
}): Promise<RecordedResult[]> {
  const model = await startScriptedAnthropic(script);
  // Claude Code's home (its settings, its session files) outside the workspace the tools list.
  const { dir: home, cleanup } = await makeTempDir("pleach-claude-code-home-");
  // The server as docs/mcp-clients.md gives it, run from this checkout.
  const documented = documentedConfig("Claude Code", "json") as {
    mcpServers: { pleach: { command: string; args: string[] } };
  };
  const server = localServer(documented.mcpServers.pleach, root);
  const mcpConfig = {
    mcpServers: { pleach: { ...server, args: [...server.args, ...extraFlags, ...flags] } },
  };
  try {
    await run(
      command[0] ?? "claude",
      [
        ...command.slice(1),
        "-p",
        "Run the scripted checks.",
        "--mcp-config",
        JSON.stringify(mcpConfig),
        "--strict-mcp-config",
        "--allowedTools",
        script.map((call) => call.tool).join(","),
        "--model",
        "claude-sonnet-4-5",
        "--output-format",
        "json",
      ],
      {
        cwd: root,
        timeout: 240_000,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: "sk-ant-scripted",
          // Only the scripted model: no telemetry, updates or error reports leave the machine.
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_TELEMETRY: "1",
          DISABLE_ERROR_REPORTING: "1",
          // The MCP tools offered to the model as they are, not behind its tool search.
          ENABLE_TOOL_SEARCH: "false",
          // A ten-minute run_tests is a call Claude Code must wait for.
          MCP_TOOL_TIMEOUT: "600000",
          ...env,
        },
      },
    );
    return model.results;
  } finally {
    await model.close();
    await cleanup();
  }
}

describe("Claude Code hands its model pleach's text", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let toolset: Toolset;
  let results: RecordedResult[] = [];
  let skip: string | undefined;

  beforeAll(async () => {
    if (!existsSync(launcher))
      throw new Error(`no pleach at ${launcher}: run \`npx tsc -b\` first`);
    const claude = await claudeCode();
    if ("skip" in claude) {
      skip = claude.skip;
      return;
    }
    ({ dir: root, cleanup } = await makeTempDir("pleach-claude-code-"));
    await makeWorkspace(root);
    const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
    toolset = createToolset(createCodingAgentTools(sandbox));

    results = await runClaudeCode({ command: claude.command, root, script: SCRIPT });
    // For measuring (before and after, per case): what the model read, written where asked.
    const record = process.env.PLEACH_REAL_CLIENTS_RECORD;
    if (record !== undefined) await writeFile(record, JSON.stringify(results, null, 1));
  }, 420_000);

  afterAll(async () => {
    await cleanup?.();
  });

  it.for(SCRIPT.map((call, index) => [`${index + 1}. ${call.name}`, index] as const))(
    "%s: the runtime's text, whole, not JSON",
    async ([, index], context) => {
      if (skip !== undefined) context.skip(skip);
      const call = SCRIPT[index];
      const recorded = results[index] && {
        ...results[index],
        text: withoutClientNote(results[index]?.text ?? ""),
      };
      if (call === undefined || recorded === undefined) {
        throw new Error(`Claude Code sent no result for step ${index + 1}`);
      }
      const expected = await toolset.call(call.name, call.input, {
        cwd: root,
        sandbox: "workspace-write",
      });
      expect(recorded.otherBlocks).toEqual([]);
      expect(recorded.text.trimStart().startsWith("{")).toBe(false);
      expect(recorded.text.length).toBeLessThanOrEqual(50_000);
      expect(withoutTimings(recorded.text)).toBe(withoutTimings(expected.output));
      // Only a call that failed is an error; failing tests are a result.
      expect(recorded.isError).toBe(false);
    },
  );

  it("kept the hints: read_file's offset, the test counts and failing names", (context) => {
    if (skip !== undefined) context.skip(skip);
    expectHints(results.map((result) => withoutClientNote(result.text)));
  });
});

// Claude Code asks for progress and gets it every second, yet stops the call at MCP_TOOL_TIMEOUT
// (measured with 5 s, the same with no progress): its timer does not restart on progress, so
// docs/mcp-clients.md gives MCP_TOOL_TIMEOUT for long calls, and pleach's descriptions point at
// background jobs.
describe("Claude Code on a call past MCP_TOOL_TIMEOUT, with progress every second", () => {
  it("stops the call at its timeout and hands its model its own timeout text", async (context) => {
    const claude = await claudeCode();
    if ("skip" in claude) return context.skip(claude.skip);
    const root = await useTempDir("pleach-claude-code-long-");
    const [result, ...more] = await runClaudeCode({
      command: claude.command,
      root,
      script: [{ ...LONG_CALL.call, tool: `mcp__pleach__${LONG_CALL.call.name}` }],
      flags: [...LONG_CALL.progressFlags.on],
      env: { MCP_TOOL_TIMEOUT: String(LONG_CALL.clientTimeoutMs) },
    });
    expect(more).toEqual([]);
    expect(result?.isError).toBe(true);
    expect(withoutClientNote(result?.text ?? "").trimEnd()).toBe(
      `MCP server "pleach" tool "bash" timed out after ${LONG_CALL.clientTimeoutMs / 1000}s`,
    );
  });
});
