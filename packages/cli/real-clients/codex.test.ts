// What Codex, the real CLI, hands its model from `pleach mcp`: `codex exec` runs against a
// scripted model behind the Responses API on 127.0.0.1 (a `model_providers` entry with its
// `base_url`), with the built `pleach mcp` configured exactly as docs/mcp-clients.md gives it
// (`--max-result-chars 12000`, since Codex keeps about 12,000 characters of a result for a model
// it does not know and cuts the middle; `tool_timeout_sec`; the approval mode). The script makes
// the calls of ./fixture.ts and records each function_call_output: it must be pleach's text for
// that budget, whole, with its hints.
//
// Out of the default run: `bash scripts/real-clients.sh`. Codex comes from the npm registry at a
// pinned version, its native binary included (an optional dependency), into a cache folder;
// PLEACH_CODEX names an installed `codex` instead.
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
  expectRuntimeText,
  extraFlags,
  installedClient,
  LONG_CALL,
  launcher,
  makeWorkspace,
  STEPS,
} from "./fixture.js";
import type { RecordedResult, ScriptedCall } from "./scripted-anthropic.js";
import { startScriptedResponses } from "./scripted-responses.js";

const run = promisify(execFile);
const CODEX_VERSION = "0.171.0";
// PLEACH_CODEX_BUDGET=none serves without --max-result-chars (to measure an older pleach).
const budgetFlag = process.env.PLEACH_CODEX_BUDGET !== "none";
/** The documented server entry, as `~/.codex/config.toml` gives it. */
const DOCUMENTED = (
  documentedConfig("Codex", "toml") as {
    mcp_servers: {
      pleach: { command: string; args: string[] } & Record<string, unknown>;
    };
  }
).mcp_servers.pleach;
const documentedBudget = Number(DOCUMENTED.args[DOCUMENTED.args.indexOf("--max-result-chars") + 1]);
const BUDGET = budgetFlag ? documentedBudget : 50_000;
/** Codex's `codex`, installed once per version into a cache folder; or why it is not. */
const codex = () =>
  installedClient({
    name: "Codex",
    packageName: "@openai/codex",
    version: CODEX_VERSION,
    entry: "bin/codex.js",
    override: process.env.PLEACH_CODEX,
  });

/** The result without the header Codex puts before every tool result (the call's wall time). */
function withoutClientHeader(text: string): string {
  return text.replace(/^Wall time: [\d.]+ seconds\nOutput:/, "");
}

/** A TOML string. */
const toml = (text: string) => JSON.stringify(text);

/**
 * Run `codex exec` on `script` in `root` with the documented server (its flags plus `flags`, its
 * settings with `settings` over them); what it sent its model, per step, Codex's header taken off.
 */
async function runCodex({
  command,
  root,
  script,
  flags = [],
  settings = {},
}: {
  command: string[];
  root: string;
  script: ScriptedCall[];
  flags?: string[];
  settings?: Record<string, unknown>;
}): Promise<RecordedResult[]> {
  const model = await startScriptedResponses(script);
  const home = await makeTempDir("pleach-codex-home-");
  const server = localServer(DOCUMENTED, root);
  if (!budgetFlag) server.args.splice(server.args.indexOf("--max-result-chars"), 2);
  // The documented settings besides the command line (the timeout, the approval mode).
  const { command: _command, args: _args, ...documented } = DOCUMENTED;
  const lines = Object.entries({ ...documented, ...settings }).map(
    ([key, value]) => `${key} = ${JSON.stringify(value)}`,
  );
  await writeFile(
    path.join(home.dir, "config.toml"),
    [
      `model = "scripted"`,
      `model_provider = "scripted"`,
      `approval_policy = "never"`,
      `[model_providers.scripted]`,
      `name = "scripted"`,
      `base_url = ${toml(`${model.url}/v1`)}`,
      `wire_api = "responses"`,
      `[mcp_servers.pleach]`,
      `command = ${toml(server.command)}`,
      `args = [${[...server.args, ...extraFlags, ...flags].map(toml).join(", ")}]`,
      ...lines,
      "",
    ].join("\n"),
  );
  try {
    const exec = run(
      command[0] ?? "codex",
      [...command.slice(1), "exec", "--skip-git-repo-check", "Run the scripted checks."],
      {
        cwd: root,
        timeout: 120_000,
        env: {
          PATH: process.env.PATH,
          HOME: home.dir,
          CODEX_HOME: home.dir,
          OPENAI_API_KEY: "sk-scripted",
        },
      },
    );
    // `codex exec` reads more of the prompt from stdin until it ends.
    exec.child.stdin?.end();
    await exec;
    return [...model.results]
      .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
      .map((result) => ({ ...result, text: withoutClientHeader(result.text) }));
  } finally {
    await model.close();
    await home.cleanup();
  }
}

describe("Codex hands its model pleach's text, within its budget", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let toolset: Toolset;
  let results: RecordedResult[] = [];
  let skip: string | undefined;

  beforeAll(async () => {
    if (!existsSync(launcher))
      throw new Error(`no pleach at ${launcher}: run \`npx tsc -b\` first`);
    const client = await codex();
    if ("skip" in client) {
      skip = client.skip;
      return;
    }
    ({ dir: root, cleanup } = await makeTempDir("pleach-codex-"));
    await makeWorkspace(root);
    const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
    toolset = createToolset(createCodingAgentTools(sandbox, { maxResultChars: BUDGET }), {
      maxChars: BUDGET,
    });

    results = await runCodex({
      command: client.command,
      root,
      script: STEPS.map((step) => ({ tool: step.name, input: step.input })),
    });
    const record = process.env.PLEACH_REAL_CLIENTS_RECORD_CODEX;
    if (record !== undefined) await writeFile(record, JSON.stringify(results, null, 1));
  }, 420_000);

  afterAll(async () => {
    await cleanup?.();
  });

  it.for(STEPS.map((step, index) => [`${index + 1}. ${step.name}`, index] as const))(
    "%s: the runtime's text for the budget, whole, not JSON",
    async ([, index], context) => {
      if (skip !== undefined) context.skip(skip);
      await expectRuntimeText({
        client: "Codex",
        recorded: results[index],
        index,
        toolset,
        root,
        budget: BUDGET,
      });
    },
  );

  it("kept the hints: read_file's offset on a page shrunk to the budget, the refused commit's note", (context) => {
    if (skip !== undefined) context.skip(skip);
    expect(results[0]?.text).toMatch(
      /\[lines 1-110 of 2000; call read_file again with offset 111 to continue\]$/,
    );
    expect(results[1]?.text).toMatch(/^exit code 1 after .*1 passed, 1 failed/);
    expect(results[5]?.text).toMatch(/\[sandbox: .*start pleach with --allow-git-writes/);
  });
});

// Codex sends a progress token and gets progress every second, yet stops the call at
// tool_timeout_sec (measured with 5 s, the same with no progress): docs/mcp-clients.md gives
// tool_timeout_sec for long calls, and pleach's descriptions point at background jobs.
describe("Codex on a call past tool_timeout_sec, with progress every second", () => {
  it("stops the call at its timeout and hands its model its own timeout text", async (context) => {
    const client = await codex();
    if ("skip" in client) return context.skip(client.skip);
    const root = await useTempDir("pleach-codex-long-");
    const [result, ...more] = await runCodex({
      command: client.command,
      root,
      script: [{ tool: LONG_CALL.call.name, input: LONG_CALL.call.input }],
      flags: [...LONG_CALL.progressFlags.on],
      settings: { tool_timeout_sec: LONG_CALL.clientTimeoutMs / 1000 },
    });
    expect(more).toEqual([]);
    expect(result?.text).toBe(
      `tool call error: tool call failed for \`pleach/bash\`\n\nCaused by:\n    timed out awaiting tools/call after ${LONG_CALL.clientTimeoutMs / 1000}s`,
    );
  });
});
